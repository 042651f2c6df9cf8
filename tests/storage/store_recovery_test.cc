// Recovery at DelayLogStore::Open after crashes and damage: the on-disk state a crash can leave
// (captured by copying the files of a live store right after Sync) is cut at every byte
// boundary and bit-flipped in its last record and index entry; the store must open, keep every
// earlier record, keep a whole last record even when its index entry is lost (a sync makes the
// data durable, not the index), and report the damage. Corrupt records in the middle are
// reported with file and offset, never returned as valid.
#include <gtest/gtest.h>

#include <filesystem>

#include "storage/delay_log_reader.h"
#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "tests/storage/file_bytes.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;
using testing::CutFile;
using testing::FlipBit;
using testing::OpenStore;
using testing::ReadFileBytes;

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kBaseSecond = kBaseMs / 1000;
constexpr int kRecords = 12;  // the last one is the victim

std::string Payload(int i) { return "record-" + std::to_string(100 + i); }  // 10 bytes
int64_t DeliverAt(int i) { return kBaseMs + (i % 3) * 1000 + i; }           // 3 seconds

void CopyDir(const std::string& from, const std::string& to) {
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    std::filesystem::copy_file(e.path(), to + "/" + e.path().filename().string(),
                               std::filesystem::copy_options::overwrite_existing);
  }
}

// The files of a store as a crash right after the last Sync leaves them. With
// heads_cover_earlier, the first kRecords - 1 records were written by an earlier session that
// closed cleanly, so the saved head table covers them and only the last entry is a tail.
struct CrashImage {
  TempDir dir;
  uint64_t data_before_last = 0;  // data file size without the last record
  uint64_t data_size = 0;
  uint64_t index_before_last = 0;
  uint64_t index_size = 0;
};

void MakeCrashImage(bool heads_cover_earlier, CrashImage* image) {
  TempDir live;
  std::unique_ptr<DelayLogStore> store = OpenStore(live.path());
  for (int i = 0; i < kRecords - 1; ++i) ASSERT_TRUE(store->Append(DeliverAt(i), Payload(i)).ok());
  if (heads_cover_earlier) {
    ASSERT_TRUE(store->Close().ok());
    store = OpenStore(live.path());
  }
  ASSERT_TRUE(store->Sync().ok());
  std::string data_path = live.path() + "/2026-11-22T16.log";
  std::string index_path = live.path() + "/2026-11-22T16.idx";
  image->data_before_last = std::filesystem::file_size(data_path);
  image->index_before_last = std::filesystem::file_size(index_path);
  ASSERT_TRUE(store->Append(DeliverAt(kRecords - 1), Payload(kRecords - 1)).ok());
  ASSERT_TRUE(store->Sync().ok());
  CopyDir(live.path(), image->dir.path());  // "crash": the store never closes these files
  image->data_size = std::filesystem::file_size(data_path);
  image->index_size = std::filesystem::file_size(index_path);
  ASSERT_EQ(image->data_size - image->data_before_last, kRecordHeaderSize + 10);
  ASSERT_EQ(image->index_size - image->index_before_last, kIndexEntrySize);
  ASSERT_EQ(std::filesystem::exists(image->dir.path() + "/2026-11-22T16.heads"),
            heads_cover_earlier);
}

// Opens a copy of the damaged image and checks that the first kRecords - 1 records are all
// there and that damage was reported. Returns the report.
RecoveryReport ReopenAndCheck(const std::string& damaged_dir, bool expect_last_present) {
  RecoveryReport report;
  std::unique_ptr<DelayLogStore> store =
      OpenStore(damaged_dir, StoreOptions{}.max_open_hours, &report);
  if (store == nullptr) return report;
  EXPECT_FALSE(report.problems.empty());
  size_t seen = 0;
  for (int s = 0; s < 3; ++s) {
    std::vector<StoredRecord> out;
    Status read = store->ReadSecond(kBaseSecond + s, &out);
    for (const StoredRecord& r : out) {
      int i = static_cast<int>(r.deliver_at_ms - kBaseMs - s * 1000);
      EXPECT_EQ(r.payload, Payload(i));
      EXPECT_EQ(r.ordinal, static_cast<uint32_t>(i / 3));
    }
    seen += out.size();
    // The victim (record 11, second 2) may survive as a reported corrupt record.
    if (!read.ok()) {
      EXPECT_EQ(read.code(), Status::Code::kCorruption);
      EXPECT_EQ(s, 2) << read.ToString();
    }
  }
  EXPECT_EQ(seen, static_cast<size_t>(kRecords - 1) + (expect_last_present ? 1 : 0));
  // The repaired store accepts appends and reads them back.
  EXPECT_TRUE(store->Append(kBaseMs + 5000, "after repair").ok());
  std::vector<StoredRecord> out;
  EXPECT_TRUE(store->ReadSecond(kBaseSecond + 5, &out).ok());
  EXPECT_EQ(out.size(), 1u);
  return report;
}

class StoreCrashTest : public ::testing::TestWithParam<bool> {};

TEST_P(StoreCrashTest, TornLastRecordAtEveryByteBoundary) {
  CrashImage image;
  MakeCrashImage(GetParam(), &image);
  if (HasFatalFailure()) return;
  for (uint64_t data_cut = image.data_before_last; data_cut <= image.data_size; ++data_cut) {
    for (uint64_t index_cut = image.index_before_last; index_cut <= image.index_size; ++index_cut) {
      // Both whole, or both without the last record: no damage to find.
      if (data_cut == image.data_size && index_cut == image.index_size) continue;
      if (data_cut == image.data_before_last && index_cut == image.index_before_last) continue;
      SCOPED_TRACE("data cut at " + std::to_string(data_cut) + ", index cut at " +
                   std::to_string(index_cut));
      TempDir damaged("storage-test", TempDir::Place::kMemory);
      CopyDir(image.dir.path(), damaged.path());
      CutFile(damaged.path() + "/2026-11-22T16.log", data_cut);
      CutFile(damaged.path() + "/2026-11-22T16.idx", index_cut);
      // A whole record comes back whatever is left of its entry.
      const bool record_whole = data_cut == image.data_size;
      RecoveryReport report = ReopenAndCheck(damaged.path(), record_whole);
      EXPECT_GT(report.truncated_bytes + report.records_dropped + report.records_reindexed, 0u);
      EXPECT_EQ(report.records_reindexed, record_whole ? 1u : 0u);
      EXPECT_EQ(report.records, static_cast<uint64_t>(kRecords - 1 + (record_whole ? 1 : 0)));
      if (HasFailure()) return;
    }
  }
}

TEST_P(StoreCrashTest, FlippedBitsInTheLastRecord) {
  CrashImage image;
  MakeCrashImage(GetParam(), &image);
  if (HasFatalFailure()) return;
  for (uint64_t offset = image.data_before_last; offset < image.data_size; ++offset) {
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE("data byte " + std::to_string(offset) + " bit " + std::to_string(bit));
      TempDir damaged("storage-test", TempDir::Place::kMemory);
      CopyDir(image.dir.path(), damaged.path());
      FlipBit(damaged.path() + "/2026-11-22T16.log", offset, bit);
      // The entry is intact: the record stays in its chain, reported, never returned.
      RecoveryReport report = ReopenAndCheck(damaged.path(), /*expect_last_present=*/false);
      EXPECT_EQ(report.corrupt_records, 1u);
      ASSERT_FALSE(report.problems.empty());
      EXPECT_EQ(report.problems[0].offset, image.data_before_last);
      if (HasFailure()) return;
    }
  }
}

TEST_P(StoreCrashTest, FlippedBitsInTheLastIndexEntry) {
  CrashImage image;
  MakeCrashImage(GetParam(), &image);
  if (HasFatalFailure()) return;
  for (uint64_t offset = image.index_before_last; offset < image.index_size; ++offset) {
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE("index byte " + std::to_string(offset) + " bit " + std::to_string(bit));
      TempDir damaged("storage-test", TempDir::Place::kMemory);
      CopyDir(image.dir.path(), damaged.path());
      FlipBit(damaged.path() + "/2026-11-22T16.idx", offset, bit);
      // The entry is dropped and made again from its record, which is whole.
      RecoveryReport report = ReopenAndCheck(damaged.path(), /*expect_last_present=*/true);
      EXPECT_EQ(report.records_dropped, 0u);
      EXPECT_EQ(report.records_reindexed, 1u);
      ASSERT_FALSE(report.problems.empty());
      EXPECT_EQ(report.problems[0].offset, image.index_before_last);
      if (HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HeadTableSavedOrNot, StoreCrashTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "TailAfterSavedHeads" : "NoSavedHeads";
                         });

// A sync leaves the index to the page cache, so a machine crash may lose any of the index
// pages written since its table was saved: at the end, or in the middle (a page written back,
// the one before it not). Every record in the data file comes back, in its chain, in arrival
// order, and the repaired index is what Append would have written.
TEST(StoreRecoveryTest, IndexEntriesLostAfterASyncAreMadeAgainFromTheData) {
  for (bool heads : {false, true}) {
    for (const char* loss : {"whole index", "last five entries", "a zeroed middle entry"}) {
      SCOPED_TRACE(std::string(loss) + (heads ? ", tail after saved heads" : ", no saved heads"));
      CrashImage image;
      MakeCrashImage(heads, &image);
      const std::string index_path = image.dir.path() + "/2026-11-22T16.idx";
      const std::string intact_index = ReadFileBytes(index_path);
      const uint64_t first_lost = heads ? kRecords - 1 : 0;  // entries a saved table covers stay
      if (std::string(loss) == "whole index") {
        CutFile(index_path, IndexEntryOffset(first_lost));
      } else if (std::string(loss) == "last five entries") {
        CutFile(index_path, IndexEntryOffset(heads ? first_lost : kRecords - 5));
      } else {
        const uint64_t victim = heads ? first_lost : 4;
        testing::OverwriteBytes(index_path, IndexEntryOffset(victim),
                                std::string(kIndexEntrySize, '\0'));
      }
      RecoveryReport report = ReopenAndCheck(image.dir.path(), /*expect_last_present=*/true);
      EXPECT_EQ(report.records, static_cast<uint64_t>(kRecords));
      EXPECT_EQ(report.records_dropped, 0u);
      EXPECT_GT(report.records_reindexed, 0u);
      // ReopenAndCheck appended one record in another second after the repair.
      EXPECT_EQ(ReadFileBytes(index_path).substr(0, intact_index.size()), intact_index);
      if (HasFailure()) return;
    }
  }
}

TEST(StoreRecoveryTest, CleanReopenReportsNothing) {
  CrashImage image;
  MakeCrashImage(true, &image);
  RecoveryReport report;
  std::unique_ptr<DelayLogStore> store =
      OpenStore(image.dir.path(), StoreOptions{}.max_open_hours, &report);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.records, static_cast<uint64_t>(kRecords));
  EXPECT_EQ(report.hours, 1u);
  EXPECT_EQ(report.truncated_bytes, 0u);
}

// A record in the middle of an uncovered tail (no saved head table after a crash) is found
// at Open; one in the covered part is found by the read that reaches it. Both name the file
// and offset, and the neighbours stay readable.
TEST(StoreRecoveryTest, CorruptMiddleRecordIsReportedAndSkipped) {
  for (bool covered : {false, true}) {
    SCOPED_TRACE(covered ? "covered by saved heads" : "in the uncovered tail");
    CrashImage image;
    MakeCrashImage(/*heads_cover_earlier=*/covered, &image);
    std::string data_path = image.dir.path() + "/2026-11-22T16.log";
    const int victim = 4;  // second 1, ordinal 1
    uint64_t victim_offset = kFileHeaderSize + victim * (kRecordHeaderSize + 10);
    FlipBit(data_path, victim_offset + kRecordHeaderSize + 2, 0);

    RecoveryReport report;
    std::unique_ptr<DelayLogStore> store =
        OpenStore(image.dir.path(), StoreOptions{}.max_open_hours, &report);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(report.records, static_cast<uint64_t>(kRecords));
    if (!covered) {
      ASSERT_EQ(report.problems.size(), 1u);
      EXPECT_EQ(report.problems[0].file, data_path);
      EXPECT_EQ(report.problems[0].offset, victim_offset);
      EXPECT_EQ(report.corrupt_records, 1u);
    }
    std::vector<StoredRecord> out;
    Status read = store->ReadSecond(kBaseSecond + 1, &out);
    EXPECT_EQ(read.code(), Status::Code::kCorruption);
    EXPECT_NE(read.message().find(data_path + " at offset " + std::to_string(victim_offset)),
              std::string::npos)
        << read.message();
    ASSERT_EQ(out.size(), 3u);  // records 1, 7, 10: every good one, ordinals intact
    EXPECT_EQ(out[0].ordinal, 0u);
    EXPECT_EQ(out[1].ordinal, 2u);
    EXPECT_EQ(out[1].payload, Payload(7));
    EXPECT_EQ(out[2].ordinal, 3u);
    // Other seconds are unaffected.
    out.clear();
    EXPECT_TRUE(store->ReadSecond(kBaseSecond, &out).ok());
    EXPECT_EQ(out.size(), 4u);
  }
}

TEST(StoreRecoveryTest, LeftoversOfHalfCreatedHoursAreRemoved) {
  TempDir dir;
  std::string base = dir.path() + "/2026-11-22T17";
  // Index without data (data is created first and deleted last): a leftover.
  testing::WriteNewFile(base + ".idx", "");
  // Data file shorter than its header: torn creation, no records.
  testing::WriteNewFile(dir.path() + "/2026-11-22T18.log", "DBL");
  RecoveryReport report;
  std::unique_ptr<DelayLogStore> store =
      OpenStore(dir.path(), StoreOptions{}.max_open_hours, &report);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Hours().empty());
  EXPECT_EQ(report.problems.size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(base + ".idx"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/2026-11-22T18.log"));
}

TEST(StoreRecoveryTest, ForeignFileFailsOpenWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.path() + "/2026-11-22T16.log";
  std::string foreign(100, 'z');
  testing::WriteNewFile(path, foreign);
  StoreOptions options;
  options.dir = dir.path();
  Result<std::unique_ptr<DelayLogStore>> store = DelayLogStore::Open(options, nullptr);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), Status::Code::kCorruption);
  EXPECT_NE(store.status().message().find(path), std::string::npos);
  EXPECT_EQ(ReadFileBytes(path), foreign);
}

// After a torn tail is repaired, the reader's verifier finds the store clean.
TEST(StoreRecoveryTest, RepairedStoreVerifiesClean) {
  CrashImage image;
  MakeCrashImage(false, &image);
  CutFile(image.dir.path() + "/2026-11-22T16.log", image.data_size - 3);
  { ASSERT_NE(OpenStore(image.dir.path()), nullptr); }
  Result<std::unique_ptr<DelayLogReader>> reader = DelayLogReader::Open(image.dir.path());
  ASSERT_TRUE(reader.ok());
  Result<VerifyReport> report = (*reader)->Verify();
  ASSERT_TRUE(report.ok());
  for (const auto& p : report->problems)
    ADD_FAILURE() << p.file << "@" << p.offset << " " << p.what;
  EXPECT_EQ(report->records_ok, static_cast<uint64_t>(kRecords - 1));
}

}  // namespace
}  // namespace delaybridge::storage
