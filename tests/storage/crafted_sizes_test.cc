// Lengths and counts read from disk never drive an allocation: a crafted file whose checksums
// are valid but whose index entry claims a 4 GiB record, or whose head table claims a 4-billion
// entry chain, is reported as damage; the process never allocates what the file claims.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "tests/storage/file_bytes.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

constexpr int64_t kHourStartMs = 1'800'000'000'000;
constexpr long kAllowedGrowthKb = 256 * 1024;  // far below what the crafted sizes claim

long PeakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A closed store with one record per second for the first three seconds of the hour.
std::string WriteStore(const delaybridge::testing::TempDir& dir) {
  const std::string path = dir.File("store");
  auto store = testing::OpenStore(path);
  EXPECT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(store->Append(kHourStartMs + i * 1000, "payload-" + std::to_string(i)).ok());
  }
  EXPECT_TRUE(store->Close().ok());
  return path;
}

std::vector<StoredRecord> ReadSecond(DelayLogStore& store, int second, Status* status) {
  std::vector<StoredRecord> records;
  *status = store.ReadSecond(kHourStartMs / 1000 + second, &records);
  return records;
}

TEST(CraftedSizesTest, AnIndexEntryClaimingAHugeRecordIsDamageNotAnAllocation) {
  delaybridge::testing::TempDir dir("crafted_sizes_test");
  const std::string path = WriteStore(dir);
  const std::string index_path = PathsOfHour(path, kHourStartMs / 3'600'000).index;
  const std::string bytes = testing::ReadFileBytes(index_path);
  IndexEntry entry;
  ASSERT_TRUE(DecodeIndexEntry(bytes.data() + IndexEntryOffset(1), &entry));
  entry.size = 0xFFFFFFF0u;
  char crafted[kIndexEntrySize];
  EncodeIndexEntry(entry, crafted);  // a valid checksum over the lie
  testing::OverwriteBytes(index_path, IndexEntryOffset(1), std::string(crafted, kIndexEntrySize));

  const long before_kb = PeakRssKb();
  RecoveryReport report;
  auto store = testing::OpenStore(path, StoreOptions{}.max_open_hours, &report);
  ASSERT_NE(store, nullptr);
  Status status;
  const std::vector<StoredRecord> records = ReadSecond(*store, 1, &status);
  EXPECT_LT(PeakRssKb() - before_kb, kAllowedGrowthKb);
  // Recovery cuts the hour at the first entry it cannot verify, or the read reports it.
  EXPECT_TRUE(records.empty());
  EXPECT_TRUE(!status.ok() || report.records_dropped > 0) << status.ToString();
}

TEST(CraftedSizesTest, AHeadTableClaimingAHugeChainIsDamageNotAnAllocation) {
  delaybridge::testing::TempDir dir("crafted_sizes_test");
  const std::string path = WriteStore(dir);
  const int64_t hour = kHourStartMs / 3'600'000;
  const std::string heads_path = PathsOfHour(path, hour).heads;
  auto slot = LoadHeads(heads_path, hour);
  ASSERT_TRUE(slot.ok() && slot->has_value()) << slot.status().ToString();
  HeadsSlot crafted = **slot;
  crafted.generation += 1;  // the newer slot wins
  crafted.cells[1].count = 0xFFFFFFF0u;
  ASSERT_TRUE(SaveHeads(heads_path, hour, crafted).ok());

  const long before_kb = PeakRssKb();
  auto store = testing::OpenStore(path);
  ASSERT_NE(store, nullptr);
  Status status;
  ReadSecond(*store, 1, &status);
  EXPECT_LT(PeakRssKb() - before_kb, kAllowedGrowthKb);
  EXPECT_EQ(status.code(), Status::Code::kCorruption) << status.ToString();
  // The seconds the lie does not touch are read as before.
  const std::vector<StoredRecord> intact = ReadSecond(*store, 2, &status);
  EXPECT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(intact.size(), 1u);
  EXPECT_EQ(intact[0].payload, "payload-2");
}

}  // namespace
}  // namespace delaybridge::storage
