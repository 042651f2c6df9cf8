#include "storage/delivery_checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

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

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
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

// Every write but the first overwrites the older slot in place, without a step of the file's
// creation (no rename, no directory sync), and the newer slot stays as it was.
TEST(DeliveryCheckpointTest, WritesAlternateSlotsInPlace) {
  TempDir dir;
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {1000, 1, 10}).ok());
  for (const DeliveryCheckpoint& cp : {DeliveryCheckpoint{2000, 2, 20}, {3000, 3, 30}}) {
    std::vector<CheckpointStep> steps;
    ASSERT_TRUE(WriteDeliveryCheckpointSteps(dir.path(), cp, [&](CheckpointStep step) {
                  steps.push_back(step);
                  return true;
                }).ok());
    EXPECT_EQ(steps, (std::vector<CheckpointStep>{CheckpointStep::kSlotHalfWritten,
                                                  CheckpointStep::kSlotWritten,
                                                  CheckpointStep::kSlotSynced}));
  }
  const std::string bytes = ReadFileBytes(CheckpointPath(dir));
  ASSERT_EQ(bytes.size(), kCheckpointFileSize);
  // Generations 1 (created), 2, 3: slot 1 holds 3, slot 0 holds 2, zeros between them.
  EXPECT_EQ(bytes.substr(0, kCheckpointSlotSize), EncodeCheckpointSlot({2000, 2, 20}, 2));
  EXPECT_EQ(bytes.substr(kCheckpointSlotSize, kCheckpointSlotStride - kCheckpointSlotSize),
            std::string(kCheckpointSlotStride - kCheckpointSlotSize, '\0'));
  EXPECT_EQ(bytes.substr(kCheckpointSlotStride), EncodeCheckpointSlot({3000, 3, 30}, 3));
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
  const DeliveryCheckpoint oldest{500, 0, 5};
  const DeliveryCheckpoint old_cp{1000, 1, 10};
  const DeliveryCheckpoint new_cp{2000, 2, 20};
  const DeliveryCheckpoint later{3000, 3, 30};
  for (const Case& c : creation) {
    SCOPED_TRACE(static_cast<int>(c.crash_after));
    // A version 1 file whose CRC fails is no slot to keep: the write replaces it whole, and a
    // crash before the rename leaves it as it was.
    TempDir dir;
    std::string damaged = VersionOneFile(old_cp);
    damaged[9] ^= 1;
    WriteBytes(CheckpointPath(dir), damaged);
    Status s = WriteDeliveryCheckpointSteps(
        dir.path(), new_cp, [&](CheckpointStep step) { return step != c.crash_after; });
    EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
    if (c.done) {
      ExpectEqual(ReadBack(dir), new_cp);
    } else {
      EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
      EXPECT_EQ(ReadFileBytes(CheckpointPath(dir)), damaged);
    }
    ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), later).ok());
    ExpectEqual(ReadBack(dir), later);
  }
  for (const Case& c : overwrite) {
    SCOPED_TRACE(static_cast<int>(c.crash_after));
    // The file holds oldest and old_cp, in either slot: the write goes over oldest.
    for (bool newest_in_slot_1 : {false, true}) {
      TempDir dir;
      if (newest_in_slot_1) {  // generations 1 (slot 1) and 2 (slot 0), then 3 (slot 1)
        ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {1, 1, 1}).ok());
      }
      ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), oldest).ok());
      ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), old_cp).ok());
      Status s = WriteDeliveryCheckpointSteps(
          dir.path(), new_cp, [&](CheckpointStep step) { return step != c.crash_after; });
      EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);
      ExpectEqual(ReadBack(dir), c.done ? new_cp : old_cp);
      ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), later).ok());
      ExpectEqual(ReadBack(dir), later);
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
  EXPECT_EQ(ReadFileBytes(CheckpointPath(dir)).substr(0, kCheckpointV1FileSize),
            VersionOneFile(v1));
  // The next write overwrites the version 1 record with slot 0.
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {4000, 4, 40}).ok());
  ExpectEqual(ReadBack(dir), {4000, 4, 40});
  EXPECT_EQ(std::filesystem::file_size(CheckpointPath(dir)), kCheckpointFileSize);
}

// Both slots valid: generation 2 (older) in slot 0, 3 (newer) in slot 1.
std::string TwoSlots(const DeliveryCheckpoint& older, const DeliveryCheckpoint& newer) {
  std::string bytes(kCheckpointFileSize, '\0');
  bytes.replace(CheckpointSlotOffset(2), kCheckpointSlotSize, EncodeCheckpointSlot(older, 2));
  bytes.replace(CheckpointSlotOffset(3), kCheckpointSlotSize, EncodeCheckpointSlot(newer, 3));
  return bytes;
}

// Damage to the newer slot falls back to the older one (what a crash before the write would
// have left), damage to the older one changes nothing; damage to both is Corruption.
TEST(DeliveryCheckpointTest, DamagedSlots) {
  const DeliveryCheckpoint older{5, 6, 7};
  const DeliveryCheckpoint newer{8, 9, 10};
  const std::string good = TwoSlots(older, newer);
  TempDir dir;
  // Bytes 44..47 of a slot are reserved and not covered by its CRC.
  for (size_t byte = 0; byte < kCheckpointSlotSize - 4; ++byte) {
    SCOPED_TRACE(byte);
    std::string bytes = good;
    bytes[CheckpointSlotOffset(2) + byte] ^= 0x20;
    WriteBytes(CheckpointPath(dir), bytes);
    ExpectEqual(ReadBack(dir), newer);
    bytes = good;
    bytes[CheckpointSlotOffset(3) + byte] ^= 0x20;
    WriteBytes(CheckpointPath(dir), bytes);
    ExpectEqual(ReadBack(dir), older);
    bytes[CheckpointSlotOffset(2) + byte] ^= 0x20;
    WriteBytes(CheckpointPath(dir), bytes);
    EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
  }
  // A slot with a good CRC is still no slot when its version is not 2 (version 1 is a record of
  // its own kind, valid at offset 0 only).
  for (uint32_t version : {0u, 1u}) {
    std::string slot = EncodeCheckpointSlot(newer, 3);
    EncodeFixed32(slot.data() + 4, version);
    EncodeFixed32(slot.data() + 40, crc32c::Value(slot.data(), 40));
    std::string bytes = good;
    bytes.replace(CheckpointSlotOffset(3), kCheckpointSlotSize, slot);
    WriteBytes(CheckpointPath(dir), bytes);
    ExpectEqual(ReadBack(dir), older);
  }
}

// Sizes: a version 1 record alone (40), one followed by a first slot write cut short, a whole
// file; anything shorter than 40 or longer than the file is Corruption.
TEST(DeliveryCheckpointTest, FileSizes) {
  const DeliveryCheckpoint v1{5, 6, 7};
  const DeliveryCheckpoint newer{8, 9, 10};
  std::string upgraded(kCheckpointFileSize, '\0');
  upgraded.replace(0, kCheckpointV1FileSize, VersionOneFile(v1));
  upgraded.replace(CheckpointSlotOffset(1), kCheckpointSlotSize, EncodeCheckpointSlot(newer, 1));
  TempDir dir;
  for (size_t size : {kCheckpointV1FileSize, kCheckpointSlotSize, kCheckpointSlotStride,
                      kCheckpointSlotStride + kCheckpointV1FileSize, kCheckpointFileSize - 1}) {
    WriteBytes(CheckpointPath(dir), upgraded.substr(0, size));
    ExpectEqual(ReadBack(dir), v1);
  }
  WriteBytes(CheckpointPath(dir), upgraded);
  ExpectEqual(ReadBack(dir), newer);
  // A slot 0 of version 2 cut short is no slot.
  std::string cut = TwoSlots(v1, newer).substr(0, kCheckpointSlotSize - 1);
  WriteBytes(CheckpointPath(dir), cut);
  EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption);
  for (size_t size : {size_t{0}, kCheckpointV1FileSize - 1, kCheckpointFileSize + 1}) {
    std::string bytes = TwoSlots(v1, newer);
    bytes.resize(size, '\0');
    WriteBytes(CheckpointPath(dir), bytes);
    EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(), Status::Code::kCorruption)
        << size;
  }
}

// A write over a file with one damaged slot overwrites the damaged one (the older generation's
// place) and keeps the valid one.
TEST(DeliveryCheckpointTest, WriteOverADamagedSlotKeepsTheValidOne) {
  TempDir dir;
  std::string bytes = TwoSlots({5, 6, 7}, {8, 9, 10});
  bytes[CheckpointSlotOffset(2) + 9] ^= 1;  // the older slot
  WriteBytes(CheckpointPath(dir), bytes);
  ASSERT_TRUE(WriteDeliveryCheckpoint(dir.path(), {11, 12, 13}).ok());
  ExpectEqual(ReadBack(dir), {11, 12, 13});
  const std::string after = ReadFileBytes(CheckpointPath(dir));
  EXPECT_EQ(after.substr(CheckpointSlotOffset(3)), EncodeCheckpointSlot({8, 9, 10}, 3));
  EXPECT_EQ(after.substr(CheckpointSlotOffset(4), kCheckpointSlotSize),
            EncodeCheckpointSlot({11, 12, 13}, 4));
}

// A file a newer build wrote is refused, whichever slot says so, and no write touches it.
TEST(DeliveryCheckpointTest, NewerVersionIsRefusedAndLeftAlone) {
  std::string slot = EncodeCheckpointSlot({1, 2, 3}, 4);
  EncodeFixed32(slot.data() + 4, kCheckpointVersion + 1);
  EncodeFixed32(slot.data() + 40, crc32c::Value(slot.data(), 40));
  for (uint64_t generation : {4u, 5u}) {
    SCOPED_TRACE(generation);
    TempDir dir;
    std::string bytes = TwoSlots({5, 6, 7}, {8, 9, 10});
    bytes.replace(CheckpointSlotOffset(generation), kCheckpointSlotSize, slot);
    WriteBytes(CheckpointPath(dir), bytes);
    EXPECT_EQ(ReadDeliveryCheckpoint(dir.path()).status().code(),
              Status::Code::kFailedPrecondition);
    EXPECT_EQ(WriteDeliveryCheckpoint(dir.path(), {4, 5, 6}).code(),
              Status::Code::kFailedPrecondition);
    EXPECT_EQ(ReadFileBytes(CheckpointPath(dir)), bytes);
  }
}

}  // namespace
}  // namespace delaybridge::storage
