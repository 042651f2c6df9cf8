// ReadSecondChain's verdict decides whether the preloader skips a second (verified damage) or
// reads it again later (an error that may pass: EIO, EMFILE, a full disk). A second holding both
// must be read again: skipping it for the damage would also skip the records the error hid.
#include "storage/second_chain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/format.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "tests/storage/file_bytes.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

constexpr int64_t kHourStartMs = 1'800'000'000'000;
constexpr int64_t kHour = kHourStartMs / 3'600'000;

// A closed store with three records in the hour's first second.
std::string WriteStore(const delaybridge::testing::TempDir& dir) {
  const std::string path = dir.File("store");
  auto store = testing::OpenStore(path);
  EXPECT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(store->Append(kHourStartMs + i, "payload-" + std::to_string(i)).ok());
  }
  EXPECT_TRUE(store->Close().ok());
  return path;
}

HeadCell FirstSecondsCell(const std::string& store_path) {
  auto slot = LoadHeads(PathsOfHour(store_path, kHour).heads, kHour);
  EXPECT_TRUE(slot.ok() && slot->has_value()) << slot.status().ToString();
  return CellOf((*slot)->cells, kHourStartMs);
}

TEST(SecondChainTest, AReadErrorOutranksDamageInTheSameSecond) {
  delaybridge::testing::TempDir dir("second_chain_test");
  const std::string path = WriteStore(dir);
  const HourPaths files = PathsOfHour(path, kHour);
  const HeadCell cell = FirstSecondsCell(path);
  ASSERT_EQ(cell.count, 3u);
  // The oldest entry is damaged: the walk from the newest reaches two entries, then the damage.
  testing::FlipBit(files.index, IndexEntryOffset(0) + 1, 3);
  auto index = PosixFile::Open(files.index, PosixFile::Mode::kReadOnly);
  ASSERT_TRUE(index.ok()) << index.status().ToString();

  // With readable data the damage is the verdict, and the two good records are returned.
  auto data = PosixFile::Open(files.data, PosixFile::Mode::kReadOnly);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  std::vector<StoredRecord> records;
  Status damaged = ReadSecondChain(*index, *data, kHourStartMs / 1000, cell, 3, &records);
  EXPECT_EQ(damaged.code(), Status::Code::kCorruption) << damaged.ToString();
  EXPECT_EQ(records.size(), 2u);

  // Data that cannot be read now (a directory's descriptor reads EISDIR): the read error is the
  // verdict, so the second is read again rather than skipped.
  auto unreadable = PosixFile::Open(dir.path(), PosixFile::Mode::kReadOnly);
  ASSERT_TRUE(unreadable.ok()) << unreadable.status().ToString();
  records.clear();
  Status status = ReadSecondChain(*index, *unreadable, kHourStartMs / 1000, cell, 3, &records);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.code(), Status::Code::kCorruption) << status.ToString();
  EXPECT_TRUE(records.empty());
}

}  // namespace
}  // namespace delaybridge::storage
