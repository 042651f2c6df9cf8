#include "storage/delivery_checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "storage/coding.h"
#include "storage/crc32c.h"
#include "storage/format.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;

void ExpectEqual(const DeliveryCheckpoint& a, const DeliveryCheckpoint& b) {
  EXPECT_EQ(a.next_deliver_at_ms, b.next_deliver_at_ms);
  EXPECT_EQ(a.next_ordinal, b.next_ordinal);
  EXPECT_EQ(a.updated_at_ms, b.updated_at_ms);
}

std::string CheckpointPath(const TempDir& dir) { return dir.path() + "/" + kCheckpointFileName; }

void WriteBytes(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// The 40 bytes an earlier build wrote (format version 1, docs/storage-format.md).
std::string VersionOneFile(const DeliveryCheckpoint& cp) {
  std::string out;
  PutFixed32(&out, kCheckpointMagic);
  PutFixed32(&out, 1);
  PutFixed64(&out, static_cast<uint64_t>(cp.next_deliver_at_ms));
  PutFixed32(&out, cp.next_ordinal);
  PutFixed32(&out, 0);
  PutFixed64(&out, static_cast<uint64_t>(cp.updated_at_ms));
  PutFixed32(&out, crc32c::Value(out.data(), out.size()));
  PutFixed32(&out, 0);
  return out;
}

DeliveryCheckpoint ReadBack(const TempDir& dir) {
  Result<std::optional<DeliveryCheckpoint>> read = ReadDeliveryCheckpoint(dir.path());
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read.ok() && read->has_value());
  return read.ok() && read->has_value() ? **read : DeliveryCheckpoint{};
}

TEST(DeliveryCheckpointTest, AbsentThenWrittenThenReplaced) {
  TempDir dir;
  Result<std::optional<DeliveryCheckpoint>> none = ReadDeliveryCheckpoint(dir.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  DeliveryCheckpoint first{1795363200123, 4, 1795881000000};
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), first).ok());
  ExpectEqual(ReadBack(dir), first);
  EXPECT_EQ(std::filesystem::file_size(CheckpointPath(dir)), kCheckpointFileSize);
  for (int i = 0; i < 5; ++i) {
    DeliveryCheckpoint next{1795363200999 + i, static_cast<uint32_t>(i), 1795881000500 + i};
    ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), next).ok());
    ExpectEqual(ReadBack(dir), next);
  }
  EXPECT_EQ(std::filesystem::file_size(CheckpointPath(dir)), kCheckpointFileSize);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/" + kCheckpointTempFileName));
}

// A write overwrites the older slot in place: the file keeps its inode (no rename, so no
// directory sync) and the newer slot stays as it was.
TEST(DeliveryCheckpointTest, WritesAlternateSlotsInPlace) {
  TempDir dir;
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {1000, 1, 10}).ok());
  const auto inode = [&] {
    struct stat st {};
    ::stat(CheckpointPath(dir).c_str(), &st);
    return st.st_ino;
  };
  const ino_t created = inode();
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {2000, 2, 20}).ok());
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {3000, 3, 30}).ok());
  EXPECT_EQ(inode(), created);
  std::string bytes;
  {
    FILE* f = std::fopen(CheckpointPath(dir).c_str(), "rb");
    ASSERT_NE(f, nullptr);
    bytes.resize(kCheckpointFileSize);
    ASSERT_EQ(std::fread(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  // Generations 1 (created), 2, 3: slot 1 holds 3, slot 0 holds 2.
  EXPECT_EQ(bytes.substr(kCheckpointSlotSize), EncodeCheckpointSlot({3000, 3, 30}, 3));
  EXPECT_EQ(bytes.substr(0, kCheckpointSlotSize), EncodeCheckpointSlot({2000, 2, 20}, 2));
}

// A crash after each step of a write: a reader then finds the old or the new checkpoint, never
// anything else, and the next write succeeds over the leftovers. Covers the file's creation
// (over a damaged file) and the in-place overwrite of each slot.
TEST(DeliveryCheckpointTest, InterruptedWriteLeavesOldOrNew) {
  struct Case {
    CheckpointStep crash_after;
    bool done;  // the step that makes the new checkpoint the one read
  };
  const Case creation[] = {
      {CheckpointStep::kTempOpened, false},  {CheckpointStep::kTempHalfWritten, false},
      {CheckpointStep::kTempWritten, false}, {CheckpointStep::kTempSynced, false},
      {CheckpointStep::kRenamed, true},      {CheckpointStep::kDirSynced, true}};
  const Case overwrite[] = {{CheckpointStep::kSlotHalfWritten, false},
                            {CheckpointStep::kSlotWritten, true},
                            {CheckpointStep::kSlotSynced, true}};
  DeliveryCheckpoint old_cp{1000, 1, 10};
  DeliveryCheckpoint new_cp{2000, 2, 20};
  auto check = [&](const TempDir& dir, const Case& c) {
    Status s = WriteDeliveryCheckpointSteps(
        dir.path(), new_cp, [&](CheckpointStep step) { return step != c.crash_after; });
    EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
    ExpectEqual(ReadBack(dir), c.done ? new_cp : old_cp);
    DeliveryCheckpoint later{3000, 3, 30};
    ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), later).ok());
    ExpectEqual(ReadBack(dir), later);
  };
  for (const Case& c : creation) {
    SCOPED_TRACE(static_cast<int>(c.crash_after));
    // A version 1 file whose CRC fails is no slot to keep: the write replaces it whole, and a
    // crash before the rename leaves it (read as Corruption, so "old" is checked by hand).
    TempDir dir;
    std::string damaged = VersionOneFile(old_cp);
    damaged[9] ^= 1;
    WriteBytes(CheckpointPath(dir), damaged);
    Status s = WriteDeliveryCheckpointSteps(
        dir.path(), new_cp, [&](CheckpointStep step) { return step != c.crash_after; });
    EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
    Result<std::optional<DeliveryCheckpoint>> read = ReadDeliveryCheckpoint(dir.path());
    if (c.done) {
      ExpectEqual(ReadBack(dir), new_cp);
    } else {
      EXPECT_EQ(read.status().code(), Status::Code::kCorruption);
    }
    // And over a healthy file: the creation path is not taken, the overwrite is.
    TempDir healthy;
    ASSERT_TRUE(WriteDeliveryCheckpoint(healthy.path(), old_cp).ok());
    ASSERT_TRUE(WriteDeliveryCheckpointSteps(healthy.path(), new_cp, [&](CheckpointStep step) {
                  EXPECT_NE(step, c.crash_after);
                  return true;
                }).ok());
  }
  for (const Case& c : overwrite) {
    SCOPED_TRACE(static_cast<int>(c.crash_after));
    for (int writes_before = 1; writes_before <= 2; ++writes_before) {  // into slot 0, slot 1
      TempDir dir;
      for (int i = 0; i < writes_before; ++i) {
        ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), old_cp).ok());
      }
      check(dir, c);
    }
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

// A store written by a build before the slots: its file is read, and the first write goes to
// slot 1 (past its 40 bytes), so a crash during that write still leaves it readable.
TEST(DeliveryCheckpointTest, VersionOneFileIsReadThenUpgradedInPlace) {
  TempDir dir;
  const DeliveryCheckpoint v1{1795363200123, 7, 1795881000000};
  WriteBytes(CheckpointPath(dir), VersionOneFile(v1));
  ExpectEqual(ReadBack(dir), v1);

  Status s = WriteDeliveryCheckpointSteps(dir.path(), {2000, 2, 20}, [](CheckpointStep step) {
    return step != CheckpointStep::kSlotHalfWritten;
  });
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
  ExpectEqual(ReadBack(dir), v1);

  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {3000, 3, 30}).ok());
  ExpectEqual(ReadBack(dir), {3000, 3, 30});
  // The next write overwrites the version 1 record with slot 0.
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {4000, 4, 40}).ok());
  ExpectEqual(ReadBack(dir), {4000, 4, 40});
  EXPECT_EQ(std::filesystem::file_size(CheckpointPath(dir)), kCheckpointFileSize);
}

// Damage to the newer slot falls back to the older one (what a crash before the write would
// have left); damage to both, or an impossible size, is Corruption.
TEST(DeliveryCheckpointTest, DamagedSlotsAndSizes) {
  const DeliveryCheckpoint older{5, 6, 7};
  const DeliveryCheckpoint newer{8, 9, 10};
  std::string good(kCheckpointFileSize, '\0');
  good.replace(0, kCheckpointSlotSize, EncodeCheckpointSlot(older, 2));
  good.replace(kCheckpointSlotSize, kCheckpointSlotSize, EncodeCheckpointSlot(newer, 3));
  TempDir dir;
  // Bytes 44..47 of a slot are reserved and not covered by its CRC.
  for (size_t byte = 0; byte < kCheckpointSlotSize - 4; ++byte) {
    SCOPED_TRACE(byte);
    std::string bytes = good;
    bytes[kCheckpointSlotSize + byte] ^= 0x20;
    WriteBytes(CheckpointPath(dir), bytes);
    ExpectEqual(ReadBack(dir), older);
    bytes[byte] ^= 0x20;
    WriteBytes(CheckpointPath(dir), bytes);
    EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
  }
  for (size_t size : {size_t{0}, size_t{39}, kCheckpointFileSize + 1}) {
    std::string bytes = good;
    bytes.resize(size, '\0');
    WriteBytes(CheckpointPath(dir), bytes);
    EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption)
        << size;
  }
}

TEST(DeliveryCheckpointTest, NewerVersionIsRefusedAndLeftAlone) {
  TempDir dir;
  std::string slot = EncodeCheckpointSlot({1, 2, 3}, 1);
  EncodeFixed32(slot.data() + 4, kCheckpointVersion + 1);
  EncodeFixed32(slot.data() + 40, crc32c::Value(slot.data(), 40));
  const std::string bytes = std::string(kCheckpointSlotSize, '\0') + slot;
  WriteBytes(CheckpointPath(dir), bytes);
  EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(WriteDeliveryCheckpoint(dir.path(), {4, 5, 6}).code(),
            Status::Code::kFailedPrecondition);
  std::string after(kCheckpointFileSize, '\0');
  FILE* f = std::fopen(CheckpointPath(dir).c_str(), "rb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(after.data(), 1, after.size(), f), after.size());
  std::fclose(f);
  EXPECT_EQ(after, bytes);
}

}  // namespace
}  // namespace delaybridge::storage
