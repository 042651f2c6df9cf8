// DelayLogStore as the bridge uses it: append, group commit, read a second, reopen, retention.
#include "storage/delay_log_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "storage/coding.h"
#include "storage/crc32c.h"
#include "storage/format.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;
using testing::OpenStore;

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z

// "h<hour>". Appended rather than `"h" + std::to_string(hour)`: GCC 12 at -O3 reports a false
// -Wrestrict on a one-character literal + std::string.
std::string HourPayload(int hour) {
  std::string payload = "h";
  payload += std::to_string(hour);
  return payload;
}

std::vector<StoredRecord> Read(DelayLogStore* store, int64_t second) {
  std::vector<StoredRecord> out;
  Status s = store->ReadSecond(second, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(DelayLogStoreTest, ReadsASecondInArrivalOrderBeforeAndAfterSync) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  int64_t second = kBaseMs / 1000 + 10;
  for (int i = 0; i < 5; ++i) {
    Result<AppendResult> r =
        store->Append(second * 1000 + 900 - i * 100, "rec" + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->second, second);
    EXPECT_EQ(r->ordinal, static_cast<uint32_t>(i));
    EXPECT_EQ(r->sequence, static_cast<uint64_t>(i + 1));
  }
  ASSERT_TRUE(store->Append(second * 1000 + 1000, "next second").ok());
  EXPECT_EQ(store->durable_sequence(), 0u);
  EXPECT_EQ(store->last_sequence(), 6u);

  std::vector<StoredRecord> before_sync = Read(store.get(), second);
  ASSERT_EQ(before_sync.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(before_sync[i].payload, "rec" + std::to_string(i));
    EXPECT_EQ(before_sync[i].ordinal, static_cast<uint32_t>(i));
    EXPECT_EQ(before_sync[i].deliver_at_ms, second * 1000 + 900 - i * 100);
  }
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->durable_sequence(), 6u);
  EXPECT_EQ(Read(store.get(), second).size(), 5u);
  EXPECT_EQ(store->CountInSecond(second).value(), 5u);
  EXPECT_EQ(store->CountInSecond(second + 1).value(), 1u);
  EXPECT_EQ(store->CountInSecond(second + 2).value(), 0u);
}

// Three hours, one record more in each second of the first hour's last three seconds; counted
// while one hour is open and the others parked or closed, and again from the files after a
// reopen.
TEST(DelayLogStoreTest, CountsTheRecordsFromASecondOnAcrossHours) {
  TempDir dir;
  const int64_t first_second = kBaseMs / 1000;
  const int64_t last_second_of_hour = first_second + 3599;
  {
    auto store = OpenStore(dir.path(), /*max_open_hours=*/1);
    for (int i = 0; i < 3; ++i) {
      for (int n = 0; n <= i; ++n) {
        ASSERT_TRUE(store->Append((last_second_of_hour - 2 + i) * 1000, "a").ok());
      }
    }
    for (int hour = 1; hour <= 2; ++hour) {
      for (int n = 0; n < 10 * hour; ++n) {
        ASSERT_TRUE(store->Append(kBaseMs + hour * kHourMs + n * 1000, HourPayload(hour)).ok());
      }
    }
    EXPECT_EQ(store->CountFromSecond(first_second).value(), 6u + 10u + 20u);
    EXPECT_EQ(store->CountFromSecond(last_second_of_hour - 1).value(), 5u + 30u);
    EXPECT_EQ(store->CountFromSecond(last_second_of_hour).value(), 3u + 30u);
    ASSERT_TRUE(store->Sync().ok());
  }
  auto store = OpenStore(dir.path());
  EXPECT_EQ(store->CountFromSecond(first_second - 3600).value(), 36u);
  EXPECT_EQ(store->CountFromSecond(last_second_of_hour).value(), 33u);
  EXPECT_EQ(store->CountFromSecond(last_second_of_hour + 1).value(), 30u);
  const int64_t second_hour = first_second + 3600;
  const int64_t third_hour = first_second + 7200;
  EXPECT_EQ(store->CountFromSecond(second_hour + 5).value(), 5u + 20u);
  EXPECT_EQ(store->CountFromSecond(third_hour + 10).value(), 10u);
  EXPECT_EQ(store->CountFromSecond(third_hour + 20).value(), 0u);
}

TEST(DelayLogStoreTest, SurvivesReopenWithEverythingReadable) {
  TempDir dir;
  int64_t second = kBaseMs / 1000;
  {
    auto store = OpenStore(dir.path());
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(store->Append(kBaseMs + (i % 7) * 1000 + i, std::string(i, 'a' + i % 26)).ok());
    }
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->Close().ok());
  }
  RecoveryReport report;
  auto store = OpenStore(dir.path(), 64, &report);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.hours, 1u);
  EXPECT_EQ(report.records, 100u);
  EXPECT_EQ(store->durable_sequence(), 0u);  // sequences restart for each Open
  size_t total = 0;
  for (int s = 0; s < 7; ++s) {
    std::vector<StoredRecord> records = Read(store.get(), second + s);
    for (size_t k = 0; k < records.size(); ++k) {
      EXPECT_EQ(records[k].ordinal, k);
      int i = static_cast<int>(records[k].deliver_at_ms - kBaseMs - s * 1000);
      EXPECT_EQ(records[k].payload, std::string(i, 'a' + i % 26));
    }
    total += records.size();
  }
  EXPECT_EQ(total, 100u);
  // Appending after reopen continues the chains.
  Result<AppendResult> r = store->Append(kBaseMs + 5, "after reopen");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ordinal, 15u);
  EXPECT_EQ(Read(store.get(), second).back().payload, "after reopen");
}

TEST(DelayLogStoreTest, AppendsAnywhereWithFewOpenHours) {
  TempDir dir;
  auto store = OpenStore(dir.path(), /*max_open_hours=*/2);
  for (int round = 0; round < 3; ++round) {
    for (int h = 0; h < 6; ++h) {
      Result<AppendResult> r = store->Append(kBaseMs + h * kHourMs + 1500, HourPayload(h));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->ordinal, static_cast<uint32_t>(round));
    }
  }
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->Hours().size(), 6u);
  for (int h = 0; h < 6; ++h) {
    std::vector<StoredRecord> records = Read(store.get(), (kBaseMs + h * kHourMs) / 1000 + 1);
    ASSERT_EQ(records.size(), 3u);
    for (const StoredRecord& record : records) EXPECT_EQ(record.payload, HourPayload(h));
  }
}

// Hours 64 apart share a slot of the store's cache of open hours (storage/open_hour_cache.h):
// appends alternating between them, all open or evicting each other, must each land in their own
// hour, with their own ordinals.
TEST(DelayLogStoreTest, HoursSharingACacheSlotKeepTheirOwnRecords) {
  for (size_t max_open_hours : {size_t{8}, size_t{2}}) {
    TempDir dir;
    auto store = OpenStore(dir.path(), max_open_hours);
    const std::vector<int> hours = {0, 64, 128, 1};
    for (int round = 0; round < 3; ++round) {
      for (int h : hours) {
        Result<AppendResult> r = store->Append(kBaseMs + h * kHourMs + 1500, HourPayload(h));
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        EXPECT_EQ(r->ordinal, static_cast<uint32_t>(round)) << "hour " << h;
      }
    }
    ASSERT_TRUE(store->Sync().ok());
    for (int h : hours) {
      std::vector<StoredRecord> records = Read(store.get(), (kBaseMs + h * kHourMs) / 1000 + 1);
      ASSERT_EQ(records.size(), 3u) << "hour " << h << ", " << max_open_hours << " open";
      for (const StoredRecord& record : records) EXPECT_EQ(record.payload, HourPayload(h));
    }
  }
}

// An evicted hour with appends not yet synced is parked; when it cannot be reopened for the
// next append (its files unreachable for a moment), it must stay parked: dropped, its appends
// would be claimed durable without a sync, and a later append would reopen the hour at a stale
// end and overwrite them.
TEST(DelayLogStoreTest, AParkedHourThatCannotBeReopenedStaysParked) {
  TempDir dir;
  auto store = OpenStore(dir.path(), /*max_open_hours=*/1);
  const int64_t hour_a_ms = kBaseMs;
  ASSERT_TRUE(store->Append(hour_a_ms + 1000, "a1").ok());
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(store->Append(hour_a_ms + 1000, "a2").ok());            // not synced
  ASSERT_TRUE(store->Append(hour_a_ms + kHourMs + 1000, "b1").ok());  // parks hour A
  const std::string data_a = dir.path() + "/2026-11-22T16.log";
  ASSERT_TRUE(std::filesystem::exists(data_a));
  std::filesystem::rename(data_a, data_a + ".away");
  EXPECT_FALSE(store->Append(hour_a_ms + 1000, "a3").ok());
  std::filesystem::rename(data_a + ".away", data_a);

  ASSERT_TRUE(store->Append(hour_a_ms + 1000, "a4").ok());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->durable_sequence(), store->last_sequence());
  ASSERT_TRUE(store->Close().ok());
  auto reopened = OpenStore(dir.path());
  std::vector<std::string> payloads;
  for (const StoredRecord& r : Read(reopened.get(), (hour_a_ms + 1000) / 1000)) {
    payloads.push_back(r.payload);
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{"a1", "a2", "a4"}));
}

TEST(DelayLogStoreTest, NextNonEmptySecondSkipsEmptyHoursAndSeconds) {
  TempDir dir;
  auto store = OpenStore(dir.path(), 1);
  int64_t first = kBaseMs / 1000 + 100;
  int64_t far = first + 24 * 3600 * 200;  // 200 days later
  ASSERT_TRUE(store->Append(first * 1000, "a").ok());
  ASSERT_TRUE(store->Append(far * 1000 + 999, "b").ok());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->NextNonEmptySecond(0, first).value(), std::nullopt);
  EXPECT_EQ(store->NextNonEmptySecond(0, first + 1).value(), first);
  EXPECT_EQ(store->NextNonEmptySecond(first + 1, far + 10).value(), far);
  EXPECT_EQ(store->NextNonEmptySecond(far + 1, far + 100000).value(), std::nullopt);
}

TEST(DelayLogStoreTest, RejectsBadInputWithoutSideEffects) {
  TempDir dir;
  StoreOptions options;
  options.dir = dir.path();
  options.max_record_bytes = 10;
  auto store = std::move(DelayLogStore::Open(options, nullptr)).value();
  EXPECT_EQ(store->Append(-1, "x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Append(kMaxDeliverAtMs, "x").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Append(kBaseMs, std::string(11, 'x')).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(store->last_sequence(), 0u);
  EXPECT_TRUE(store->Hours().empty());
  EXPECT_TRUE(store->Append(kBaseMs, std::string(10, 'x')).ok());
  EXPECT_TRUE(store->Append(0, "").ok());
  EXPECT_TRUE(store->Append(kMaxDeliverAtMs - 1, "").ok());
}

TEST(DelayLogStoreTest, DeleteHoursBeforeRemovesWholeHoursOnly) {
  TempDir dir;
  auto store = OpenStore(dir.path(), 2);
  for (int h = 0; h < 4; ++h) ASSERT_TRUE(store->Append(kBaseMs + h * kHourMs, "x").ok());
  ASSERT_TRUE(store->Sync().ok());
  // Hour 1 is only partly before the cut: it stays.
  ASSERT_TRUE(store->DeleteHoursBefore(kBaseMs + kHourMs + 1).ok());
  std::vector<int64_t> hours = store->Hours();
  ASSERT_EQ(hours.size(), 3u);
  EXPECT_EQ(hours.front(), kBaseMs / kHourMs + 1);
  ASSERT_TRUE(store->Close().ok());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find("2026-11-22T16"), std::string::npos);
    ++files;
  }
  EXPECT_EQ(files, 9u);  // 3 hours x (log, idx, heads)
  auto reopened = OpenStore(dir.path());
  EXPECT_EQ(reopened->Hours().size(), 3u);
  // A deleted hour can be appended to again: it starts empty.
  ASSERT_TRUE(reopened->Append(kBaseMs, "again").ok());
  EXPECT_EQ(Read(reopened.get(), kBaseMs / 1000).size(), 1u);
}

// The store skips the hour lookup when an append goes to the hour appended to last. Deleting
// that hour must end the shortcut: the next append to it creates the hour again, and is kept.
TEST(DelayLogStoreTest, AnHourDeletedRightAfterAnAppendIsCreatedAgainByTheNext) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  ASSERT_TRUE(store->Append(kBaseMs + 1000, "before").ok());
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(store->DeleteHoursBefore(kBaseMs + kHourMs).ok());
  EXPECT_TRUE(store->Hours().empty());

  ASSERT_TRUE(store->Append(kBaseMs + 1000, "after").ok());
  EXPECT_EQ(store->Hours(), std::vector<int64_t>{kBaseMs / kHourMs});
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(store->Close().ok());
  auto reopened = OpenStore(dir.path());
  std::vector<StoredRecord> records = Read(reopened.get(), kBaseMs / 1000 + 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].payload, "after");
}

// An hour evicted to make room for one whose files cannot be created is no longer open, though
// it was appended to last: the next append to it must reopen it, not write to the appender that
// was closed.
TEST(DelayLogStoreTest, AnHourEvictedForAnHourThatFailsToOpenIsReopenedByTheNextAppend) {
  TempDir dir;
  auto store = OpenStore(dir.path(), /*max_open_hours=*/1);
  ASSERT_TRUE(store->Append(kBaseMs + 1000, "a1").ok());
  ASSERT_TRUE(store->Sync().ok());  // hour A is clean: evicting it closes it
  // A directory where hour B's data file would be: creating hour B fails after A was evicted.
  const std::string data_b = dir.path() + "/2026-11-22T17.log";
  std::filesystem::create_directory(data_b);
  EXPECT_FALSE(store->Append(kBaseMs + kHourMs + 1000, "b1").ok());
  std::filesystem::remove(data_b);

  ASSERT_TRUE(store->Append(kBaseMs + 1000, "a2").ok());
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(store->Close().ok());
  auto reopened = OpenStore(dir.path());
  std::vector<std::string> payloads;
  for (const StoredRecord& r : Read(reopened.get(), kBaseMs / 1000 + 1)) {
    payloads.push_back(r.payload);
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{"a1", "a2"}));
}

TEST(DelayLogStoreTest, LargeRecordsBypassTheBufferIntact) {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::string big(3 * 1024 * 1024 + 7, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  ASSERT_TRUE(store->Append(kBaseMs, "small before").ok());
  ASSERT_TRUE(store->Append(kBaseMs + 1, big).ok());
  ASSERT_TRUE(store->Append(kBaseMs + 2, "small after").ok());
  std::vector<StoredRecord> records = Read(store.get(), kBaseMs / 1000);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].payload, "small before");
  EXPECT_TRUE(records[1].payload == big);
  EXPECT_EQ(records[2].payload, "small after");
}

TEST(DelayLogStoreTest, RecordsAtTheBuffersBoundsAreStoredWhole) {
  // A record that fills the data buffer to its last byte, one that then needs it written first,
  // one as large as the whole buffer, one a byte larger (written directly), then enough small
  // ones to fill the index buffer twice over. The test builds assert that no buffer grows past
  // its size; every record must read back whole, in order, before and after a reopen.
  const size_t small = 100;
  const size_t fills_the_rest = kWriteBufferBytes - 2 * kRecordHeaderSize - small;
  std::vector<std::string> payloads = {std::string(small, 'a'), std::string(fills_the_rest, 'b'),
                                       std::string(1, 'c'),
                                       std::string(kWriteBufferBytes - kRecordHeaderSize, 'd'),
                                       std::string(kWriteBufferBytes - kRecordHeaderSize + 1, 'e')};
  for (size_t i = 0; i < 2 * kIndexBufferBytes / kIndexEntrySize + 1; ++i) {
    payloads.push_back(std::to_string(i));
  }
  TempDir dir;
  auto expect_all = [&](DelayLogStore* store) {
    std::vector<StoredRecord> records = Read(store, kBaseMs / 1000);
    ASSERT_EQ(records.size(), payloads.size());
    for (size_t i = 0; i < payloads.size(); ++i) {
      EXPECT_TRUE(records[i].payload == payloads[i]) << "record " << i;
    }
  };
  {
    auto store = OpenStore(dir.path());
    for (const std::string& payload : payloads) ASSERT_TRUE(store->Append(kBaseMs, payload).ok());
    expect_all(store.get());
    ASSERT_TRUE(store->Close().ok());
  }
  auto reopened = OpenStore(dir.path());
  expect_all(reopened.get());
}

TEST(DelayLogStoreTest, OpenFailsClearlyOnAFileFromANewerVersion) {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    ASSERT_TRUE(store->Append(kBaseMs, "x").ok());
    ASSERT_TRUE(store->Close().ok());
  }
  std::string path = dir.path() + "/2026-11-22T16.log";
  std::string header = EncodeFileHeader(kDataMagic, kBaseMs / kHourMs);
  // Signed correctly, so that only the version is wrong.
  EncodeFixed32(header.data() + 4, kFormatVersion + 1);
  EncodeFixed32(header.data() + 16, crc32c::Value(header.data(), 16));
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fwrite(header.data(), 1, header.size(), f);
  std::fclose(f);
  StoreOptions options;
  options.dir = dir.path();
  Result<std::unique_ptr<DelayLogStore>> store = DelayLogStore::Open(options, nullptr);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("2026-11-22T16.log"), std::string::npos);
  EXPECT_NE(store.status().message().find("newer"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::storage
