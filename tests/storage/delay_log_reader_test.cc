// DelayLogReader as delaylog-dump uses it: summaries, seconds, records, and a verifier that
// finds each injected fault with its file and offset, without modifying anything.
#include "storage/delay_log_reader.h"

#include <gtest/gtest.h>

#include "storage/crc32c.h"
#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "tests/storage/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;
using testing::CutFile;
using testing::FlipBit;
using testing::OverwriteBytes;
using testing::ReadFileBytes;

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kHour = kBaseMs / 3'600'000;
constexpr int64_t kBaseSecond = kBaseMs / 1000;

// Builds a store with 3 records in second 0, 2 in second 1 (interleaved), 1 in the next hour.
// Payload i is "payload-i" and record i is appended i-th.
void BuildStore(const std::string& dir) {
  StoreOptions options;
  options.dir = dir;
  auto store = std::move(DelayLogStore::Open(options, nullptr)).value();
  const int64_t times[] = {kBaseMs + 5,    kBaseMs + 1005, kBaseMs + 6,
                           kBaseMs + 1999, kBaseMs + 999,  kBaseMs + 3'600'000};
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(store->Append(times[i], "payload-" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(store->Close().ok());
}

std::unique_ptr<DelayLogReader> OpenReader(const std::string& dir) {
  Result<std::unique_ptr<DelayLogReader>> reader = DelayLogReader::Open(dir);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  return std::move(reader).value();
}

std::string DataPath(const std::string& dir) { return dir + "/2026-11-22T16.log"; }
std::string IndexPath(const std::string& dir) { return dir + "/2026-11-22T16.idx"; }

// Offset of record i of hour kHour (all payloads are 9 bytes).
uint64_t RecordOffset(int i) { return kFileHeaderSize + i * (kRecordHeaderSize + 9); }

TEST(DelayLogReaderTest, SummarizesHoursAndSeconds) {
  TempDir dir;
  BuildStore(dir.path());
  auto reader = OpenReader(dir.path());
  EXPECT_TRUE(reader->LooksLikeStore());
  ASSERT_EQ(reader->Hours(), (std::vector<int64_t>{kHour, kHour + 1}));
  Result<HourSummary> summary = reader->SummarizeHour(kHour);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->name, "2026-11-22T16");
  EXPECT_EQ(summary->records, 5u);
  EXPECT_EQ(summary->payload_bytes, 45u);
  EXPECT_EQ(summary->data_bytes, RecordOffset(5));
  EXPECT_EQ(summary->index_bytes, kFileHeaderSize + 5 * kIndexEntrySize);
  EXPECT_EQ(summary->min_deliver_at_ms, kBaseMs + 5);
  EXPECT_EQ(summary->max_deliver_at_ms, kBaseMs + 1999);
  EXPECT_EQ(summary->index_tail_bytes, 0u);
  EXPECT_EQ(summary->unindexed_data_bytes, 0u);

  Result<std::array<uint32_t, kSecondsPerHour>> counts = reader->SecondCounts(kHour);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[0], 3u);
  EXPECT_EQ((*counts)[1], 2u);
  EXPECT_EQ((*counts)[2], 0u);
}

TEST(DelayLogReaderTest, WalksASecondAndReadsRecordsByOffset) {
  TempDir dir;
  BuildStore(dir.path());
  auto reader = OpenReader(dir.path());
  std::vector<ChainRecordView> second;
  ASSERT_TRUE(reader->ReadSecond(kBaseSecond, &second).ok());
  ASSERT_EQ(second.size(), 3u);
  const uint32_t positions[] = {0, 2, 4};
  for (uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(second[k].ordinal, k);
    EXPECT_EQ(second[k].position, positions[k]);
    EXPECT_TRUE(second[k].status.ok());
    EXPECT_EQ(second[k].payload, "payload-" + std::to_string(positions[k]));
  }
  std::vector<uint32_t> seen;
  ASSERT_TRUE(reader
                  ->ForEachIndexEntry(kHour,
                                      [&](const IndexEntryView& view) {
                                        EXPECT_TRUE(view.checksum_ok);
                                        EXPECT_EQ(view.entry.log_offset,
                                                  RecordOffset(view.position));
                                        seen.push_back(view.position);
                                        return true;
                                      })
                  .ok());
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  Result<RecordView> record = reader->ReadRecordAt(kHour, RecordOffset(3));
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->payload, "payload-3");
  EXPECT_EQ(record->deliver_at_ms, kBaseMs + 1999);
  EXPECT_EQ(reader->ReadRecordAt(kHour, RecordOffset(3) + 1).status().code(),
            Status::Code::kCorruption);
}

TEST(DelayLogReaderTest, VerifyIsCleanOnAGoodStore) {
  TempDir dir;
  BuildStore(dir.path());
  auto reader = OpenReader(dir.path());
  Result<VerifyReport> report = reader->Verify();
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  for (const VerifyProblem& p : report->problems)
    ADD_FAILURE() << p.file << "@" << p.offset << " " << p.what;
  EXPECT_EQ(report->hours, 2u);
  EXPECT_EQ(report->entries, 6u);
  EXPECT_EQ(report->records_ok, 6u);
}

// Returns the single problem of the verify report, failing the test otherwise.
VerifyProblem OnlyProblem(const std::string& dir) {
  auto reader = OpenReader(dir);
  Result<VerifyReport> report = reader->Verify();
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (!report.ok()) return {};
  std::string all;
  for (const VerifyProblem& p : report->problems) {
    all += p.file + "@" + std::to_string(p.offset) + ": " + p.what + "\n";
  }
  EXPECT_EQ(report->problems.size(), 1u) << all;
  return report->problems.empty() ? VerifyProblem{} : report->problems.front();
}

TEST(DelayLogReaderTest, VerifyFindsAFlippedBitInARecord) {
  TempDir dir;
  BuildStore(dir.path());
  FlipBit(DataPath(dir.path()), RecordOffset(2) + kRecordHeaderSize + 3, 1);
  std::string before = ReadFileBytes(DataPath(dir.path()));
  VerifyProblem p = OnlyProblem(dir.path());
  EXPECT_EQ(p.file, DataPath(dir.path()));
  EXPECT_EQ(p.offset, RecordOffset(2));
  EXPECT_NE(p.what.find("checksum"), std::string::npos) << p.what;
  EXPECT_EQ(ReadFileBytes(DataPath(dir.path())), before);  // the reader changed nothing

  auto reader = OpenReader(dir.path());
  std::vector<ChainRecordView> second;
  ASSERT_TRUE(reader->ReadSecond(kBaseSecond, &second).ok());
  ASSERT_EQ(second.size(), 3u);
  EXPECT_TRUE(second[0].status.ok());
  EXPECT_EQ(second[1].status.code(), Status::Code::kCorruption);
  EXPECT_TRUE(second[2].status.ok());
}

TEST(DelayLogReaderTest, VerifyFindsAnEntryPointingPastTheData) {
  TempDir dir;
  BuildStore(dir.path());
  CutFile(DataPath(dir.path()), RecordOffset(4) + 10);
  VerifyProblem p = OnlyProblem(dir.path());
  EXPECT_EQ(p.file, IndexPath(dir.path()));
  EXPECT_EQ(p.offset, IndexEntryOffset(4));
  EXPECT_NE(p.what.find("past the end"), std::string::npos) << p.what;
}

TEST(DelayLogReaderTest, VerifyFindsADamagedIndexEntry) {
  TempDir dir;
  BuildStore(dir.path());
  FlipBit(IndexPath(dir.path()), IndexEntryOffset(1) + 9, 4);
  auto reader = OpenReader(dir.path());
  Result<VerifyReport> report = reader->Verify();
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->problems.empty());
  EXPECT_EQ(report->problems[0].file, IndexPath(dir.path()));
  EXPECT_EQ(report->problems[0].offset, IndexEntryOffset(1));
  EXPECT_NE(report->problems[0].what.find("checksum"), std::string::npos);
}

// Rewrites entry `position` with a different pre_index and a valid checksum.
void Relink(const std::string& dir, uint32_t position, uint32_t pre_index) {
  std::string index = ReadFileBytes(IndexPath(dir));
  IndexEntry entry;
  ASSERT_TRUE(DecodeIndexEntry(index.data() + IndexEntryOffset(position), &entry));
  entry.pre_index = pre_index;
  char bytes[kIndexEntrySize];
  EncodeIndexEntry(entry, bytes);
  OverwriteBytes(IndexPath(dir), IndexEntryOffset(position), std::string(bytes, kIndexEntrySize));
}

TEST(DelayLogReaderTest, VerifyFindsBrokenChains) {
  struct Case {
    uint32_t position;
    uint32_t pre_index;
    const char* expected;
  };
  const Case cases[] = {
      {4, 4, "cycle"},               // links to itself
      {4, 1, "another second"},      // entry 1 is second 1
      {4, 0, "unreachable"},         // skips entry 2 of its own second
      {2, kNoEntry, "unreachable"},  // cuts entry 0 off its chain
  };
  for (const Case& c : cases) {
    TempDir dir;
    BuildStore(dir.path());
    Relink(dir.path(), c.position, c.pre_index);
    auto reader = OpenReader(dir.path());
    Result<VerifyReport> report = reader->Verify();
    ASSERT_TRUE(report.ok());
    bool found = false;
    for (const VerifyProblem& p : report->problems) {
      if (p.file == IndexPath(dir.path()) && p.offset == IndexEntryOffset(c.position) &&
          p.what.find(c.expected) != std::string::npos) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << "entry " << c.position << " -> " << c.pre_index;
    // The chain walk reports the break too, instead of looping or crossing seconds.
    std::vector<ChainRecordView> second;
    Status walk = reader->ReadSecond(kBaseSecond, &second);
    EXPECT_EQ(walk.code(), Status::Code::kCorruption) << c.expected;
    EXPECT_LE(second.size(), 3u);
  }
}

TEST(DelayLogReaderTest, VerifyFindsAHeadTableThatDisagrees) {
  TempDir dir;
  BuildStore(dir.path());
  std::string heads_path = dir.path() + "/2026-11-22T16.heads";
  std::string heads = ReadFileBytes(heads_path);
  // The store saved exactly one slot; find it and change second 1's count, re-signed.
  for (uint64_t generation = 1; generation <= 2; ++generation) {
    HeadsSlot slot;
    uint64_t offset = HeadsSlotOffset(generation);
    if (!DecodeHeadsSlot(std::string_view(heads).substr(offset, kHeadsSlotSize), &slot)) continue;
    slot.cells[1].count = 7;
    OverwriteBytes(heads_path, offset, EncodeHeadsSlot(slot));
    VerifyProblem p = OnlyProblem(dir.path());
    EXPECT_EQ(p.file, heads_path);
    EXPECT_EQ(p.offset, offset + kHeadsSlotHeaderSize + 8);
    return;
  }
  FAIL() << "no valid heads slot";
}

TEST(DelayLogReaderTest, PartialTailsLookLikeAWriteInProgress) {
  TempDir dir;
  BuildStore(dir.path());
  std::string data = ReadFileBytes(DataPath(dir.path()));
  OverwriteBytes(DataPath(dir.path()), data.size(), "half a record");
  std::string index = ReadFileBytes(IndexPath(dir.path()));
  OverwriteBytes(IndexPath(dir.path()), index.size(), std::string(13, 'x'));
  auto reader = OpenReader(dir.path());
  Result<HourSummary> summary = reader->SummarizeHour(kHour);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->records, 5u);
  EXPECT_EQ(summary->index_tail_bytes, 13u);
  EXPECT_EQ(summary->unindexed_data_bytes, 13u);
  Result<VerifyReport> report = reader->Verify();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->problems.size(), 2u);
  for (const VerifyProblem& p : report->problems) EXPECT_TRUE(p.at_tail) << p.what;
  EXPECT_EQ(report->records_ok, 6u);
}

TEST(DelayLogReaderTest, ReadsAStoreThatIsBeingWritten) {
  TempDir dir;
  StoreOptions options;
  options.dir = dir.path();
  auto store = std::move(DelayLogStore::Open(options, nullptr)).value();
  for (int i = 0; i < 20000; ++i) ASSERT_TRUE(store->Append(kBaseMs + i % 3000, "live").ok());
  // Some of it is written (buffers overflowed), the rest still in the store's buffers.
  auto reader = OpenReader(dir.path());
  Result<HourSummary> summary = reader->SummarizeHour(kHour);
  ASSERT_TRUE(summary.ok());
  EXPECT_GT(summary->records, 0u);
  EXPECT_LE(summary->records, 20000u);
  ASSERT_TRUE(store->Sync().ok());
  summary = reader->SummarizeHour(kHour);
  EXPECT_EQ(summary->records, 20000u);
  std::vector<ChainRecordView> second;
  ASSERT_TRUE(reader->ReadSecond(kBaseSecond + 2, &second).ok());
  EXPECT_EQ(second.size(), 6000u);  // i % 3000 in [2000, 3000) for six full cycles of i
}

TEST(DelayLogReaderTest, ClearErrorsForMissingDirAndNewerVersion) {
  EXPECT_EQ(DelayLogReader::Open("/nonexistent/delaybridge").status().code(),
            Status::Code::kNotFound);
  TempDir empty;
  EXPECT_FALSE(OpenReader(empty.path())->LooksLikeStore());

  TempDir dir;
  BuildStore(dir.path());
  std::string header = EncodeFileHeader(kIndexMagic, kHour);
  std::string newer = header;
  newer[4] = static_cast<char>(kFormatVersion + 1);
  // Re-sign: only the version differs from a valid header.
  std::string signed_header = newer.substr(0, 16);
  char crc[4];
  uint32_t value = crc32c::Value(signed_header.data(), 16);
  for (int i = 0; i < 4; ++i) crc[i] = static_cast<char>(value >> (8 * i));
  signed_header.append(crc, 4).append(4, '\0');
  OverwriteBytes(IndexPath(dir.path()), 0, signed_header);
  auto reader = OpenReader(dir.path());
  Result<HourSummary> summary = reader->SummarizeHour(kHour);
  EXPECT_EQ(summary.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(summary.status().message().find("newer"), std::string::npos);
  EXPECT_EQ(reader->Verify().status().code(), Status::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace delaybridge::storage
