#include "storage/delivery_checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;

void ExpectEqual(const DeliveryCheckpoint& a, const DeliveryCheckpoint& b) {
  EXPECT_EQ(a.next_deliver_at_ms, b.next_deliver_at_ms);
  EXPECT_EQ(a.next_ordinal, b.next_ordinal);
  EXPECT_EQ(a.updated_at_ms, b.updated_at_ms);
}

TEST(DeliveryCheckpointTest, AbsentThenWrittenThenReplaced) {
  TempDir dir;
  Result<std::optional<DeliveryCheckpoint>> none = ReadDeliveryCheckpoint(dir.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  DeliveryCheckpoint first{1795363200123, 4, 1795881000000};
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), first).ok());
  ExpectEqual(ReadDeliveryCheckpoint(dir.path())->value(), first);
  DeliveryCheckpoint second{1795363200999, 0, 1795881000500};
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), second).ok());
  ExpectEqual(ReadDeliveryCheckpoint(dir.path())->value(), second);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/" + kCheckpointTempFileName));
}

// A crash after each step of the replacement: a reader then finds the old or the new
// checkpoint, never anything else, and the next write succeeds over the leftovers.
TEST(DeliveryCheckpointTest, InterruptedReplacementLeavesOldOrNew) {
  const CheckpointStep steps[] = {CheckpointStep::kTempOpened,  CheckpointStep::kTempHalfWritten,
                                  CheckpointStep::kTempWritten, CheckpointStep::kTempSynced,
                                  CheckpointStep::kRenamed,     CheckpointStep::kDirSynced};
  DeliveryCheckpoint old_cp{1000, 1, 10};
  DeliveryCheckpoint new_cp{2000, 2, 20};
  for (CheckpointStep crash_after : steps) {
    TempDir dir;
    ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), old_cp).ok());
    Status s = WriteDeliveryCheckpointSteps(
        dir.path(), new_cp, [&](CheckpointStep step) { return step != crash_after; });
    EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
    Result<std::optional<DeliveryCheckpoint>> read = ReadDeliveryCheckpoint(dir.path());
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_TRUE(read->has_value());
    bool renamed =
        crash_after == CheckpointStep::kRenamed || crash_after == CheckpointStep::kDirSynced;
    ExpectEqual(**read, renamed ? new_cp : old_cp);
    DeliveryCheckpoint later{3000, 3, 30};
    ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), later).ok());
    ExpectEqual(ReadDeliveryCheckpoint(dir.path())->value(), later);
  }
}

TEST(DeliveryCheckpointTest, InterruptedFirstWriteLeavesNoCheckpoint) {
  TempDir dir;
  Status s = WriteDeliveryCheckpointSteps(dir.path(), {1, 1, 1}, [](CheckpointStep step) {
    return step != CheckpointStep::kTempSynced;
  });
  EXPECT_FALSE(s.ok());
  Result<std::optional<DeliveryCheckpoint>> read = ReadDeliveryCheckpoint(dir.path());
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->has_value());
}

TEST(DeliveryCheckpointTest, DamagedFileIsCorruption) {
  TempDir dir;
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {5, 6, 7}).ok());
  std::string path = dir.path() + "/" + kCheckpointFileName;
  for (int byte = 0; byte < 40; byte += 3) {
    std::string bytes = EncodeCheckpoint({5, 6, 7});
    bytes[byte] ^= 0x20;
    FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    Result<std::optional<DeliveryCheckpoint>> read = ReadDeliveryCheckpoint(dir.path());
    // Bytes 20..23 and 36..39 are reserved and not covered by the CRC only in 36..39.
    if (byte >= 36) continue;
    EXPECT_FALSE(read.ok()) << "flipped byte " << byte;
  }
  std::filesystem::resize_file(path, 39);
  EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
  std::filesystem::resize_file(path, 0);
  EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace delaybridge::storage
