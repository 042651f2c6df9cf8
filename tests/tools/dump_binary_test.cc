// delaylog-dump run as a binary on stores written with storage/ (DelayLogStore) and the
// bridge's record encoding: summary numbers, --hour, --second order, --find-*, delivered state
// from a checkpoint, cancels and the records they cancel, --verify on a good store and on each
// injected fault, --json validity, usage errors, clear messages for bad directories, and that no
// mode modifies the store.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include "plugin/delayed_record.h"
#include "plugin/stored_cancel.h"
#include "storage/crc32c.h"
#include "storage/delay_log_reader.h"
#include "storage/delay_log_store.h"
#include "storage/delivery_checkpoint.h"
#include "storage/format.h"
#include "storage/hour_files.h"
#include "tests/support/read_file.h"
#include "tests/tools/dump_json_check.h"

namespace delaybridge::dump {
namespace {

namespace fs = std::filesystem;
using Fields = std::map<std::string, std::string>;

constexpr int64_t kHourMs = storage::kMsPerHour;
constexpr int64_t kBaseMs = 1795000000000 / kHourMs * kHourMs;  // 2026-11-18T11:00:00Z
constexpr int64_t kHotSecond = kBaseMs / 1000 + 5;              // many records, one second
constexpr uint32_t kSeed = 20261118;
// The cancel store (WriteStoreWithCancel): two seconds of its first hour.
constexpr int64_t kCancelSecond = kBaseMs / 1000 + 10;  // holds a cancel and its target
constexpr int64_t kOtherSecond = kBaseMs / 1000 + 20;   // holds no cancel

struct Written {
  int64_t deliver_at_ms = 0;
  uint32_t ordinal = 0;
  plugin::DelayedRecord record;
  size_t payload_bytes = 0;
};

struct DumpRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

void PatchFile(const std::string& path, uint64_t offset, const std::string& bytes) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(file.good()) << path;
}

class DumpBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char root_template[] = "/tmp/delaylog_dump_test_XXXXXX";
    ASSERT_NE(::mkdtemp(root_template), nullptr);
    root_ = root_template;
    store_ = root_ + "/delayed-0";
    char err_template[] = "/tmp/delaylog_dump_stderr_XXXXXX";
    int fd = ::mkstemp(err_template);
    ASSERT_GE(fd, 0);
    ::close(fd);
    stderr_path_ = err_template;
  }
  void TearDown() override {
    fs::remove_all(root_);
    fs::remove(stderr_path_);
  }

  DumpRun Dump(const std::vector<std::string>& args) {
    std::string command = Quote(DELAYLOG_DUMP_BIN);
    // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on " " + std::string.
    for (const std::string& arg : args) {
      command += ' ';
      command += Quote(arg);
    }
    command += " 2>";
    command += Quote(stderr_path_);
    DumpRun run;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return run;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.out.append(buffer, n);
    int status = ::pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.err = testing::ReadFile(stderr_path_);
    return run;
  }

  // Every line of out parsed as a JSON object; a line that does not parse fails the test.
  static std::vector<Fields> JsonLines(const std::string& out) {
    std::vector<Fields> lines;
    size_t start = 0;
    while (start < out.size()) {
      size_t end = out.find('\n', start);
      if (end == std::string::npos) end = out.size();
      std::string line = out.substr(start, end - start);
      std::optional<Fields> fields = JsonObjectFields(line);
      if (fields) {
        lines.push_back(*fields);
      } else {
        ADD_FAILURE() << "not a JSON object: " << line;
      }
      start = end + 1;
    }
    return lines;
  }

  static std::vector<Fields> OfType(const std::vector<Fields>& lines, const std::string& type) {
    std::vector<Fields> found;
    for (const Fields& f : lines) {
      if (f.at("type") == type) found.push_back(f);
    }
    return found;
  }

  // 300 records: every third in kHotSecond (in rising ms, so arrival order is time order),
  // the others spread over two hours by a seeded generator.
  std::vector<Written> WriteStore(const std::string& dir, int records = 300) {
    std::mt19937_64 rng(kSeed);
    storage::StoreOptions options;
    options.dir = dir;
    Result<std::unique_ptr<storage::DelayLogStore>> store =
        storage::DelayLogStore::Open(options, nullptr);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    std::vector<Written> written;
    for (int i = 0; i < records; ++i) {
      Written w;
      w.deliver_at_ms =
          i % 3 == 0 ? kHotSecond * 1000 + i : kBaseMs + int64_t(rng() % (2 * kHourMs));
      w.record.target_topic = "orders";
      w.record.key = "key-" + std::to_string(i);
      w.record.value = "value of record " + std::to_string(i) + std::string(i % 7 * 20, 'v');
      w.record.headers = {{"trace", "t-" + std::to_string(i)}, {"nullable", std::nullopt}};
      w.record.source_topic = "delayed";
      w.record.source_partition = 0;
      w.record.source_offset = 1000 + i;
      w.record.source_timestamp_ms = kBaseMs - 60000;
      w.record.requested_deliver_at_ms = w.deliver_at_ms;
      std::string payload = plugin::EncodeDelayedRecord(w.record);
      w.payload_bytes = payload.size();
      Result<storage::AppendResult> appended = (*store)->Append(w.deliver_at_ms, payload);
      EXPECT_TRUE(appended.ok()) << appended.status().ToString();
      w.ordinal = appended->ordinal;
      written.push_back(std::move(w));
    }
    EXPECT_TRUE((*store)->Close().ok());
    return written;
  }

  // Five records of delayed/0 (offsets 2000..2004) and, at offset 2005, a cancel of 2001 stored as
  // the bridge stores it: at its target's deliver_at_ms, appended after it. Records 2000..2002
  // are in kCancelSecond (ordinals 0..2, the cancel 3), 2003 and 2004 in kOtherSecond. The
  // checkpoint is at 2001: 2000 is delivered. Returns the cancel's payload offset in its data file.
  uint64_t WriteStoreWithCancel() {
    storage::StoreOptions options;
    options.dir = store_;
    Result<std::unique_ptr<storage::DelayLogStore>> store =
        storage::DelayLogStore::Open(options, nullptr);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    auto append = [&](int64_t deliver_at_ms, const std::string& payload) {
      Result<storage::AppendResult> appended = (*store)->Append(deliver_at_ms, payload);
      EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    };
    const int64_t deliver_at_ms[] = {kCancelSecond * 1000 + 100, kCancelSecond * 1000 + 200,
                                     kCancelSecond * 1000 + 300, kOtherSecond * 1000 + 100,
                                     kOtherSecond * 1000 + 200};
    for (int i = 0; i < 5; ++i) {
      append(deliver_at_ms[i], plugin::EncodeDelayedRecord(CancelStoreRecord(2000 + i)));
    }
    append(deliver_at_ms[1], plugin::EncodeStoredCancel({.source_topic = "delayed",
                                                         .source_partition = 0,
                                                         .cancel_offset = 2005,
                                                         .target_offset = 2001,
                                                         .cancel_timestamp_ms = kBaseMs - 1000}));
    EXPECT_TRUE((*store)->Close().ok());
    EXPECT_TRUE(storage::WriteDeliveryCheckpoint(store_, {.next_deliver_at_ms = deliver_at_ms[1],
                                                          .next_ordinal = 1,
                                                          .updated_at_ms = kBaseMs})
                    .ok());
    return Entries(kBaseMs / kHourMs).back().entry.log_offset;
  }

  static plugin::DelayedRecord CancelStoreRecord(int64_t source_offset) {
    return {.target_topic = "orders",
            .key = "key-" + std::to_string(source_offset),
            .value = "v",
            .headers = {},
            .source_topic = "delayed",
            .source_partition = 0,
            .source_offset = source_offset,
            .source_timestamp_ms = kBaseMs - 60000,
            .requested_deliver_at_ms = kBaseMs};
  }

  // The record lines of a --json run, in order.
  std::vector<Fields> JsonRecords(const std::vector<std::string>& args) {
    std::vector<std::string> json_args = args;
    json_args.insert(json_args.begin(), "--json");
    DumpRun run = Dump(json_args);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return OfType(JsonLines(run.out), "record");
  }

  // A checkpoint at the hot second's record with ordinal 40: everything before it delivered.
  storage::DeliveryCheckpoint WriteCheckpoint(const std::vector<Written>& written) {
    storage::DeliveryCheckpoint cp;
    for (const Written& w : written) {
      if (w.deliver_at_ms / 1000 == kHotSecond && w.ordinal == 40) {
        cp.next_deliver_at_ms = w.deliver_at_ms;
        cp.next_ordinal = w.ordinal;
      }
    }
    cp.updated_at_ms = kBaseMs;
    EXPECT_TRUE(storage::WriteDeliveryCheckpoint(store_, cp).ok());
    return cp;
  }

  static bool Delivered(const storage::DeliveryCheckpoint& cp, const Written& w) {
    return std::tie(w.deliver_at_ms, w.ordinal) < std::tie(cp.next_deliver_at_ms, cp.next_ordinal);
  }

  // Index entries of an hour, as the storage reader sees them.
  std::vector<storage::IndexEntryView> Entries(int64_t epoch_hour) {
    auto reader = storage::DelayLogReader::Open(store_);
    EXPECT_TRUE(reader.ok());
    std::vector<storage::IndexEntryView> entries;
    EXPECT_TRUE((*reader)
                    ->ForEachIndexEntry(epoch_hour,
                                        [&](const storage::IndexEntryView& view) {
                                          entries.push_back(view);
                                          return true;
                                        })
                    .ok());
    return entries;
  }

  // Runs --verify --json and expects exit 1 and a problem at exactly file/offset.
  void ExpectProblemAt(const std::string& file, uint64_t offset, const std::string& words) {
    DumpRun run = Dump({"--verify", "--json", store_});
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    bool found = false;
    for (const Fields& problem : OfType(JsonLines(run.out), "problem")) {
      if (problem.at("file") == file && problem.at("offset") == std::to_string(offset) &&
          problem.at("what").find(words) != std::string::npos) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << "no problem at " << file << " offset " << offset << " saying '" << words
                       << "' in:\n"
                       << run.out;
    Fields verdict = OfType(JsonLines(run.out), "verify").at(0);
    EXPECT_EQ(verdict.at("clean"), "false");
    // The text form names the same place.
    DumpRun text = Dump({"--verify", store_});
    EXPECT_EQ(text.exit_code, 1);
    EXPECT_NE(text.out.find("PROBLEM " + file + " offset " + std::to_string(offset)),
              std::string::npos)
        << text.out;
  }

  std::string root_;
  std::string store_;
  std::string stderr_path_;
};

TEST_F(DumpBinaryTest, SummaryMatchesWhatWasWritten) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  std::vector<Written> written = WriteStore(store_);
  storage::DeliveryCheckpoint cp = WriteCheckpoint(written);
  struct Expected {
    uint64_t records = 0, delivered = 0, payload_bytes = 0;
    int64_t min_ms = INT64_MAX, max_ms = INT64_MIN;
  };
  std::map<std::string, Expected> expected;
  for (const Written& w : written) {
    Expected& e = expected[storage::HourName(storage::HourOfMs(w.deliver_at_ms))];
    e.records += 1;
    e.delivered += Delivered(cp, w);
    e.payload_bytes += w.payload_bytes;
    e.min_ms = std::min(e.min_ms, w.deliver_at_ms);
    e.max_ms = std::max(e.max_ms, w.deliver_at_ms);
  }
  ASSERT_EQ(expected.size(), 2u);

  DumpRun run = Dump({"--json", store_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<Fields> lines = JsonLines(run.out);
  std::vector<Fields> hours = OfType(lines, "hour");
  ASSERT_EQ(hours.size(), 2u);
  uint64_t total_delivered = 0;
  for (const Fields& hour : hours) {
    const Expected& e = expected.at(hour.at("hour"));
    EXPECT_EQ(hour.at("records"), std::to_string(e.records));
    EXPECT_EQ(hour.at("delivered"), std::to_string(e.delivered));
    EXPECT_EQ(hour.at("pending"), std::to_string(e.records - e.delivered));
    EXPECT_EQ(hour.at("payload_bytes"), std::to_string(e.payload_bytes));
    EXPECT_EQ(hour.at("earliest_ms"), std::to_string(e.min_ms));
    EXPECT_EQ(hour.at("latest_ms"), std::to_string(e.max_ms));
    EXPECT_EQ(hour.at("store"), store_);
    total_delivered += e.delivered;
  }
  // The checkpoint splits the first hour: its own second is looked into record by record.
  const Expected& first = expected.at("2026-11-18T11");
  EXPECT_GE(first.delivered, 40u);
  EXPECT_LT(first.delivered, first.records);
  Fields total = OfType(lines, "total").at(0);
  EXPECT_EQ(total.at("records"), std::to_string(written.size()));
  EXPECT_EQ(total.at("delivered"), std::to_string(total_delivered));
  Fields checkpoint = OfType(lines, "checkpoint").at(0);
  EXPECT_EQ(checkpoint.at("present"), "true");
  EXPECT_EQ(checkpoint.at("next_deliver_at_ms"), std::to_string(cp.next_deliver_at_ms));
  EXPECT_EQ(checkpoint.at("next_ordinal"), "40");

  DumpRun text = Dump({store_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("2026-11-18T11 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2026-11-18T12 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("checkpoint: delivered everything before"), std::string::npos);
  EXPECT_NE(text.out.find(std::to_string(written.size() - total_delivered) + " records pending\n"),
            std::string::npos)
      << text.out;
}

TEST_F(DumpBinaryTest, HourListsPerSecondCounts) {
  std::vector<Written> written = WriteStore(store_);
  std::map<int64_t, int> per_second;
  for (const Written& w : written) {
    if (storage::HourOfMs(w.deliver_at_ms) == kBaseMs / kHourMs)
      per_second[w.deliver_at_ms / 1000]++;
  }
  DumpRun run = Dump({"--json", "--hour", "2026-11-18T11", store_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<Fields> lines = JsonLines(run.out);
  std::vector<Fields> seconds = OfType(lines, "second");
  ASSERT_EQ(seconds.size(), per_second.size());
  for (const Fields& second : seconds) {
    EXPECT_EQ(second.at("records"), std::to_string(per_second.at(std::stoll(second.at("second")))));
  }
  DumpRun text = Dump({"--hour", "2026-11-18T11", store_});
  EXPECT_NE(text.out.find("2026-11-18T11:00:05Z  " + std::to_string(kHotSecond) + "  100"),
            std::string::npos)
      << text.out;
  DumpRun empty = Dump({"--hour", "2026-11-18T15", store_});
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_NE(empty.out.find("has no hour file 2026-11-18T15"), std::string::npos);
}

TEST_F(DumpBinaryTest, SecondListsExactlyThatSecondInArrivalOrder) {
  std::vector<Written> written = WriteStore(store_);
  storage::DeliveryCheckpoint cp = WriteCheckpoint(written);
  std::vector<const Written*> hot;
  for (const Written& w : written) {
    if (w.deliver_at_ms / 1000 == kHotSecond) hot.push_back(&w);
  }
  ASSERT_EQ(hot.size(), 100u);
  for (const std::string& second :
       {std::to_string(kHotSecond), std::string("2026-11-18T11:00:05Z")}) {
    DumpRun run = Dump({"--json", "--second", second, store_});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::vector<Fields> records = OfType(JsonLines(run.out), "record");
    ASSERT_EQ(records.size(), hot.size());
    for (size_t i = 0; i < hot.size(); ++i) {
      EXPECT_EQ(records[i].at("source_offset"), std::to_string(hot[i]->record.source_offset));
      EXPECT_EQ(records[i].at("ordinal"), std::to_string(i));
      EXPECT_EQ(records[i].at("deliver_at_ms"), std::to_string(hot[i]->deliver_at_ms));
      EXPECT_EQ(records[i].at("key"), *hot[i]->record.key);
      EXPECT_EQ(records[i].at("target_topic"), "orders");
      EXPECT_EQ(records[i].at("delivered"), Delivered(cp, *hot[i]) ? "true" : "false");
      EXPECT_EQ(records[i].at("headers"), "[{\"name\":\"trace\",\"value\":\"t-" +
                                              std::to_string(hot[i]->record.source_offset - 1000) +
                                              "\"},{\"name\":\"nullable\",\"value\":null}]");
    }
  }
  // Text: previews are cut at 64 bytes unless --full; --hex adds the bytes.
  const Written& long_one = *hot[2];  // i = 6: value of 16 + 120 bytes
  DumpRun text = Dump({"--second", std::to_string(kHotSecond), store_});
  EXPECT_NE(text.out.find("...(+"), std::string::npos);
  DumpRun full = Dump({"--second", std::to_string(kHotSecond), "--full", "--hex", store_});
  EXPECT_NE(full.out.find("\"" + *long_one.record.value + "\""), std::string::npos);
  EXPECT_NE(full.out.find("hex 6b65792d36\n"), std::string::npos) << full.out;  // "key-6"
  EXPECT_NE(full.out.find("header  trace = \"t-6\""), std::string::npos);
  EXPECT_NE(full.out.find("source delayed/0/1006"), std::string::npos);
  DumpRun none = Dump({"--json", "--second", std::to_string(kHotSecond + 1), store_});
  EXPECT_EQ(OfType(JsonLines(none.out), "second_total").at(0).at("records"), "0");
}

TEST_F(DumpBinaryTest, FindsBySourceAndKeyWithDeliveredState) {
  std::vector<Written> written = WriteStore(store_);
  storage::DeliveryCheckpoint cp = WriteCheckpoint(written);
  const Written* delivered = nullptr;
  const Written* pending = nullptr;
  for (const Written& w : written) {
    if (Delivered(cp, w) && delivered == nullptr) delivered = &w;
    if (!Delivered(cp, w) && pending == nullptr) pending = &w;
  }
  ASSERT_TRUE(delivered != nullptr && pending != nullptr);
  for (const Written* w : {delivered, pending}) {
    std::string source = "delayed/0/" + std::to_string(w->record.source_offset);
    for (const std::vector<std::string>& mode :
         {std::vector<std::string>{"--find-source", source}, {"--find-key", *w->record.key}}) {
      std::vector<std::string> args = mode;
      args.insert(args.end(), {"--json", root_});  // the storage root: stores found inside
      DumpRun run = Dump(args);
      ASSERT_EQ(run.exit_code, 0) << run.err;
      std::vector<Fields> lines = JsonLines(run.out);
      std::vector<Fields> found = OfType(lines, "record");
      ASSERT_EQ(found.size(), 1u) << run.out;
      EXPECT_EQ(found[0].at("source_offset"), std::to_string(w->record.source_offset));
      EXPECT_EQ(found[0].at("deliver_at_ms"), std::to_string(w->deliver_at_ms));
      EXPECT_EQ(found[0].at("ordinal"), std::to_string(w->ordinal));
      EXPECT_EQ(found[0].at("second"), std::to_string(w->deliver_at_ms / 1000));
      EXPECT_EQ(found[0].at("hour"), storage::HourName(storage::HourOfMs(w->deliver_at_ms)));
      EXPECT_EQ(found[0].at("delivered"), w == delivered ? "true" : "false");
      EXPECT_EQ(found[0].at("data_file"),
                storage::PathsOfHour(store_, storage::HourOfMs(w->deliver_at_ms)).data);
      EXPECT_EQ(OfType(lines, "find_total").at(0).at("records_examined"),
                std::to_string(written.size()));
    }
  }
  DumpRun text = Dump({"--find-key", *pending->record.key, store_});
  EXPECT_NE(text.out.find("PENDING"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(": 1 records with key " + *pending->record.key), std::string::npos);
  DumpRun missing = Dump({"--find-source", "delayed/0/999999", "--json", store_});
  EXPECT_EQ(missing.exit_code, 0);
  EXPECT_EQ(OfType(JsonLines(missing.out), "find_total").at(0).at("matches"), "0");
}

TEST_F(DumpBinaryTest, SecondShowsACancelAndTheRecordItCancels) {
  WriteStoreWithCancel();
  std::vector<Fields> records = JsonRecords({"--second", std::to_string(kCancelSecond), store_});
  ASSERT_EQ(records.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(records[i].at("kind"), "record");
    EXPECT_EQ(records[i].at("source_offset"), std::to_string(2000 + i));
    EXPECT_EQ(records[i].at("cancelled"), i == 1 ? "true" : "false") << i;
    EXPECT_EQ(records[i].at("delivered"), i == 0 ? "true" : "false") << i;
  }
  const Fields& cancel = records[3];
  EXPECT_EQ(cancel.at("kind"), "cancel");
  EXPECT_EQ(cancel.at("ordinal"), "3");
  EXPECT_EQ(cancel.at("deliver_at_ms"), std::to_string(kCancelSecond * 1000 + 200));
  EXPECT_EQ(cancel.at("cancels"), "delayed/0/2001");
  EXPECT_EQ(cancel.at("cancels_offset"), "2001");
  EXPECT_EQ(cancel.at("source_topic"), "delayed");
  EXPECT_EQ(cancel.at("source_partition"), "0");
  EXPECT_EQ(cancel.at("source_offset"), "2005");
  EXPECT_EQ(cancel.at("source_timestamp_ms"), std::to_string(kBaseMs - 1000));
  EXPECT_EQ(cancel.count("cancelled"), 0u);
  EXPECT_EQ(cancel.count("target_topic"), 0u);
  // A cancel names records of its own second only.
  for (const Fields& record : JsonRecords({"--second", std::to_string(kOtherSecond), store_})) {
    EXPECT_EQ(record.at("cancelled"), "false") << record.at("source_offset");
  }

  DumpRun text = Dump({"--second", std::to_string(kCancelSecond), store_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ordinal 0  delivered\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ordinal 1  CANCELLED\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ordinal 2  PENDING\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ordinal 3  CANCEL of delayed/0/2001\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    source delayed/0/2005  timestamp 2026-11-18T10:59:59.000Z\n"),
            std::string::npos)
      << text.out;
}

TEST_F(DumpBinaryTest, FindSourceReportsACancelledRecordAndACancel) {
  WriteStoreWithCancel();
  struct Case {
    std::string sought;
    std::string kind;
    std::string state;  // what the text output says of it
  } cases[] = {
      {"delayed/0/2001", "record", "CANCELLED"},
      {"delayed/0/2002", "record", "PENDING"},
      {"delayed/0/2003", "record", "PENDING"},
      {"delayed/0/2005", "cancel", "CANCEL of delayed/0/2001"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sought);
    std::vector<Fields> found = JsonRecords({"--find-source", c.sought, store_});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].at("kind"), c.kind);
    EXPECT_EQ("delayed/0/" + found[0].at("source_offset"), c.sought);
    if (c.kind == "record") {
      EXPECT_EQ(found[0].at("cancelled"), c.state == "CANCELLED" ? "true" : "false");
    } else {
      EXPECT_EQ(found[0].at("cancels"), "delayed/0/2001");
    }
    DumpRun text = Dump({"--find-source", c.sought, store_});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("  " + c.state + "\n"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(": 1 records with source " + c.sought + " (6 records examined)"),
              std::string::npos)
        << text.out;
  }
  // --find-key reads the same way; a cancel has no key.
  std::vector<Fields> by_key = JsonRecords({"--find-key", "key-2001", store_});
  ASSERT_EQ(by_key.size(), 1u);
  EXPECT_EQ(by_key[0].at("cancelled"), "true");
  EXPECT_TRUE(JsonRecords({"--find-key", "key-2005", store_}).empty());
}

TEST_F(DumpBinaryTest, SummaryCountsCancelsApartFromPendingRecords) {
  WriteStoreWithCancel();
  DumpRun run = Dump({"--json", store_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<Fields> lines = JsonLines(run.out);
  // 6 entries: 2000 delivered; 2002, 2003, 2004 pending; 2001 cancelled; the cancel.
  for (const Fields& counts : {OfType(lines, "hour").at(0), OfType(lines, "total").at(0)}) {
    SCOPED_TRACE(counts.at("type"));
    EXPECT_EQ(counts.at("records"), "6");
    EXPECT_EQ(counts.at("delivered"), "1");
    EXPECT_EQ(counts.at("pending"), "3");
    EXPECT_EQ(counts.at("cancels"), "1");
    EXPECT_EQ(counts.at("cancelled"), "1");
  }
  DumpRun text = Dump({store_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  cancels: 1, records cancelled: 1\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  1 hour files, 3 records pending, 1 cancelled, 1 cancels\n"),
            std::string::npos)
      << text.out;
  // --hour counts what the index holds: the cancel is one of its second's 4 entries.
  DumpRun hour = Dump({"--hour", "2026-11-18T11", store_});
  EXPECT_NE(hour.out.find("2026-11-18T11:00:10Z  " + std::to_string(kCancelSecond) + "  4\n"),
            std::string::npos)
      << hour.out;
}

TEST_F(DumpBinaryTest, VerifyAcceptsCancelsAndReportsOneThatDoesNotDecode) {
  WriteStoreWithCancel();
  DumpRun clean = Dump({"--verify", "--json", store_});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  Fields verdict = OfType(JsonLines(clean.out), "verify").at(0);
  EXPECT_EQ(verdict.at("clean"), "true");
  EXPECT_EQ(verdict.at("entries"), "6");

  // A cancel of 2003 cut short: its first byte says cancel, its 4 bytes do not decode as one.
  {
    storage::StoreOptions options;
    options.dir = store_;
    auto store = storage::DelayLogStore::Open(options, nullptr);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Append(kOtherSecond * 1000 + 100, std::string("\x02\x01\x02\x03")).ok());
    ASSERT_TRUE((*store)->Close().ok());
  }
  const uint64_t bad_offset = Entries(kBaseMs / kHourMs).back().entry.log_offset;
  ExpectProblemAt(storage::PathsOfHour(store_, kBaseMs / kHourMs).data, bad_offset,
                  "payload does not decode: Corruption: stored cancel");
  // --second shows it as damaged, and the record it meant to cancel as pending, as the
  // preloader delivers it.
  DumpRun second = Dump({"--second", std::to_string(kOtherSecond), store_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.out.find("DAMAGED: payload does not decode: Corruption: stored cancel"),
            std::string::npos)
      << second.out;
  EXPECT_NE(second.out.find("ordinal 0  PENDING\n"), std::string::npos) << second.out;
  std::vector<Fields> json = OfType(
      JsonLines(Dump({"--json", "--second", std::to_string(kOtherSecond), store_}).out), "record");
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[2].at("kind"), "cancel");
  EXPECT_NE(json[2].at("damaged").find("stored cancel"), std::string::npos);
}

TEST_F(DumpBinaryTest, VerifyIsCleanOnAGoodStore) {
  WriteCheckpoint(WriteStore(store_));
  DumpRun run = Dump({"--verify", "--json", store_});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  Fields verdict = OfType(JsonLines(run.out), "verify").at(0);
  EXPECT_EQ(verdict.at("clean"), "true");
  EXPECT_EQ(verdict.at("entries"), "300");
  EXPECT_EQ(verdict.at("records_ok"), "300");
  EXPECT_EQ(verdict.at("checkpoint_present"), "true");
  DumpRun text = Dump({"--verify", store_});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find(": clean, 2 hours, 300 index entries"), std::string::npos) << text.out;
}

TEST_F(DumpBinaryTest, VerifyReportsATruncatedTail) {
  WriteStore(store_);
  int64_t hour = kBaseMs / kHourMs + 1;
  std::vector<storage::IndexEntryView> entries = Entries(hour);
  const storage::IndexEntryView& last = entries.back();
  std::string data = storage::PathsOfHour(store_, hour).data;
  fs::resize_file(data, last.entry.log_offset + storage::kRecordHeaderSize + last.entry.size - 3);
  ExpectProblemAt(storage::PathsOfHour(store_, hour).index, last.index_offset,
                  "points past the end");
}

TEST_F(DumpBinaryTest, VerifyReportsAFlippedBitInARecord) {
  WriteStore(store_);
  int64_t hour = kBaseMs / kHourMs;
  const storage::IndexEntryView victim = Entries(hour).at(17);
  std::string data = storage::PathsOfHour(store_, hour).data;
  uint64_t at = victim.entry.log_offset + storage::kRecordHeaderSize + 5;
  std::string byte = testing::ReadFile(data).substr(at, 1);
  byte[0] = static_cast<char>(byte[0] ^ 0x10);
  PatchFile(data, at, byte);
  ExpectProblemAt(data, victim.entry.log_offset, "checksum");
  // --second shows the damage on that record and exits 1.
  DumpRun second = Dump({"--second", std::to_string(victim.entry.deliver_at_ms / 1000), store_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.out.find("DAMAGED"), std::string::npos) << second.out;
}

TEST_F(DumpBinaryTest, VerifyReportsAnIndexEntryPointingPastTheData) {
  WriteStore(store_);
  int64_t hour = kBaseMs / kHourMs;
  storage::IndexEntryView victim = Entries(hour).back();
  victim.entry.log_offset = fs::file_size(storage::PathsOfHour(store_, hour).data) + 4096;
  std::string bytes(storage::kIndexEntrySize, '\0');
  storage::EncodeIndexEntry(victim.entry, bytes.data());
  PatchFile(storage::PathsOfHour(store_, hour).index, victim.index_offset, bytes);
  ExpectProblemAt(storage::PathsOfHour(store_, hour).index, victim.index_offset,
                  "points past the end");
}

TEST_F(DumpBinaryTest, VerifyReportsABrokenChain) {
  WriteStore(store_);
  int64_t hour = kBaseMs / kHourMs;
  // The 5th entry of the hot second, relinked to nothing: entries 0..3 become unreachable.
  std::vector<storage::IndexEntryView> hot;
  for (const storage::IndexEntryView& view : Entries(hour)) {
    if (view.entry.deliver_at_ms / 1000 == kHotSecond) hot.push_back(view);
  }
  storage::IndexEntryView victim = hot.at(4);
  ASSERT_NE(victim.entry.pre_index, storage::kNoEntry);
  victim.entry.pre_index = storage::kNoEntry;
  std::string bytes(storage::kIndexEntrySize, '\0');
  storage::EncodeIndexEntry(victim.entry, bytes.data());
  std::string index = storage::PathsOfHour(store_, hour).index;
  PatchFile(index, victim.index_offset, bytes);
  ExpectProblemAt(index, victim.index_offset, "unreachable");
  DumpRun second = Dump({"--second", std::to_string(kHotSecond), store_});
  EXPECT_EQ(second.exit_code, 1) << second.out;
  EXPECT_NE(second.err.find("Corruption"), std::string::npos) << second.err;
}

TEST_F(DumpBinaryTest, FileBeingWrittenIsReportedAsATail) {
  WriteStore(store_);
  int64_t hour = kBaseMs / kHourMs;
  storage::HourPaths paths = storage::PathsOfHour(store_, hour);
  uint64_t index_size = fs::file_size(paths.index);
  uint64_t data_size = fs::file_size(paths.data);
  // What a reader sees between the writer's data write and its index write.
  std::ofstream(paths.data, std::ios::app | std::ios::binary) << std::string(40, 'd');
  std::ofstream(paths.index, std::ios::app | std::ios::binary) << std::string(12, 'i');
  DumpRun summary = Dump({store_});
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("ends with 12 bytes of a partial entry: being written right now"),
            std::string::npos)
      << summary.out;
  EXPECT_NE(summary.out.find("has 40 bytes after the last indexed record"), std::string::npos);
  DumpRun verify = Dump({"--verify", "--json", store_});
  EXPECT_EQ(verify.exit_code, 1);
  std::vector<Fields> problems = OfType(JsonLines(verify.out), "problem");
  ASSERT_EQ(problems.size(), 2u) << verify.out;
  for (const Fields& problem : problems) EXPECT_EQ(problem.at("at_tail"), "true");
  EXPECT_EQ(problems[0].at("offset"), std::to_string(index_size));
  EXPECT_EQ(problems[1].at("offset"), std::to_string(data_size));
  DumpRun text = Dump({"--verify", store_});
  EXPECT_NE(text.out.find("a write in progress looks like this"), std::string::npos);

  // An hour file that is being created: its header is not complete yet.
  storage::HourPaths next = storage::PathsOfHour(store_, hour + 5);
  std::ofstream(next.data, std::ios::binary) << std::string(10, 'h');
  std::ofstream(next.index, std::ios::binary) << "";
  DumpRun creating = Dump({store_});
  EXPECT_EQ(creating.exit_code, 1);
  EXPECT_NE(creating.err.find(next.data + " at offset 0: file header is incomplete (10 bytes): "
                                          "being created right now, or torn"),
            std::string::npos)
      << creating.err;
}

TEST_F(DumpBinaryTest, ReadsAStoreThatIsOpenForAppending) {
  storage::StoreOptions options;
  options.dir = store_;
  Result<std::unique_ptr<storage::DelayLogStore>> store =
      storage::DelayLogStore::Open(options, nullptr);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::string payload = plugin::EncodeDelayedRecord({.target_topic = "orders",
                                                     .key = "live",
                                                     .value = "v",
                                                     .headers = {},
                                                     .source_topic = "delayed",
                                                     .source_partition = 0,
                                                     .source_offset = 1,
                                                     .source_timestamp_ms = -1,
                                                     .requested_deliver_at_ms = kBaseMs});
  for (int round = 1; round <= 2; ++round) {
    for (int i = 0; i < 100; ++i) ASSERT_TRUE((*store)->Append(kBaseMs + i * 10, payload).ok());
    ASSERT_TRUE((*store)->Sync().ok());
    // The head table on disk lags (saved every 65536 entries or at close): the dump must not
    // depend on it.
    DumpRun summary = Dump({"--json", store_});
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_EQ(OfType(JsonLines(summary.out), "total").at(0).at("records"),
              std::to_string(100 * round));
    DumpRun second = Dump({"--json", "--second", std::to_string(kBaseMs / 1000), store_});
    EXPECT_EQ(OfType(JsonLines(second.out), "second_total").at(0).at("records"),
              std::to_string(100 * round));
    DumpRun verify = Dump({"--verify", store_});
    EXPECT_EQ(verify.exit_code, 0) << verify.out;
  }
  EXPECT_TRUE((*store)->Close().ok());
}

TEST_F(DumpBinaryTest, NoModeModifiesTheStore) {
  WriteCheckpoint(WriteStore(store_));
  auto snapshot = [&] {
    std::map<std::string, std::pair<fs::file_time_type, std::string>> files;
    for (const auto& entry : fs::recursive_directory_iterator(root_)) {
      files[entry.path()] = {fs::last_write_time(entry.path()),
                             entry.is_regular_file() ? testing::ReadFile(entry.path()) : ""};
    }
    return files;
  };
  auto before = snapshot();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {store_},
           {root_, "--json"},
           {"--hour", "2026-11-18T11", store_},
           {"--second", std::to_string(kHotSecond), "--hex", "--full", store_},
           {"--find-key", "key-3", root_},
           {"--find-source", "delayed/0/1003", store_},
           {"--verify", store_},
           {"--verify", "--json", root_}}) {
    DumpRun run = Dump(args);
    EXPECT_EQ(run.exit_code, 0) << args[0] << "\n" << run.err;
  }
  EXPECT_TRUE(before == snapshot()) << "a file changed (bytes or mtime)";
}

TEST_F(DumpBinaryTest, StorageRootSummarisesEveryStore) {
  WriteStore(store_, 30);
  WriteStore(root_ + "/delayed-1", 12);
  fs::create_directory(root_ + "/not-a-store");
  DumpRun run = Dump({"--json", root_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<Fields> totals = OfType(JsonLines(run.out), "total");
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].at("store"), store_);
  EXPECT_EQ(totals[0].at("records"), "30");
  EXPECT_EQ(totals[1].at("store"), root_ + "/delayed-1");
  EXPECT_EQ(totals[1].at("records"), "12");
  EXPECT_EQ(OfType(JsonLines(run.out), "checkpoint").at(0).at("present"), "false");
}

TEST_F(DumpBinaryTest, UsageErrorsExitTwoWithAReason) {
  WriteStore(store_, 3);
  struct Case {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{}, "no directory given"},
      {{"--frobnicate", store_}, "unknown option"},
      {{"--hour", "yesterday", store_}, "expected YYYY-MM-DDTHH"},
      {{"--second", "noon", store_}, "expected epoch seconds"},
      {{"--find-source", "delayed-0-5", store_}, "expected topic/partition/offset"},
      {{"--verify", "--hour", "2026-11-18T11", store_}, "only one of"},
      {{"--second"}, "needs a value"},
  };
  for (const Case& c : cases) {
    DumpRun run = Dump(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.says;
    EXPECT_NE(run.err.find(c.says), std::string::npos) << run.err;
  }
  DumpRun help = Dump({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: delaylog-dump"), std::string::npos);
}

TEST_F(DumpBinaryTest, ClearMessagesForDirectoriesThatCannotBeInspected) {
  DumpRun missing = Dump({root_ + "/nope"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find(root_ + "/nope: no such directory"), std::string::npos) << missing.err;

  fs::create_directory(root_ + "/empty");
  std::ofstream(root_ + "/empty/notes.txt") << "hello";
  DumpRun not_store = Dump({"--json", root_ + "/empty"});
  EXPECT_EQ(not_store.exit_code, 2);
  EXPECT_NE(not_store.err.find("not a DelayBridge store"), std::string::npos) << not_store.err;
  EXPECT_EQ(OfType(JsonLines(not_store.out), "error").size(), 1u);

  DumpRun file = Dump({root_ + "/empty/notes.txt"});
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_NE(file.err.find("not a directory"), std::string::npos) << file.err;

  // A data file header of format version 2 (valid checksum): written by a newer DelayBridge.
  WriteStore(store_, 3);
  std::string data = storage::PathsOfHour(store_, kBaseMs / kHourMs).data;
  std::string header = testing::ReadFile(data).substr(0, 16);
  header[4] = 2;
  uint32_t crc = storage::crc32c::Value(header.data(), 16);
  for (int i = 0; i < 4; ++i) header += static_cast<char>((crc >> (8 * i)) & 0xFF);
  PatchFile(data, 0, header);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{store_}, {"--verify", store_}}) {
    DumpRun newer = Dump(args);
    EXPECT_EQ(newer.exit_code, 2) << newer.out;
    EXPECT_NE(newer.err.find("is newer than this build supports"), std::string::npos) << newer.err;
  }
}

TEST_F(DumpBinaryTest, DamagedCheckpointIsReported) {
  WriteCheckpoint(WriteStore(store_, 30));
  // A store's first checkpoint is in slot 1, slot 0 empty: damaging it leaves no valid slot.
  PatchFile(store_ + "/CHECKPOINT", storage::CheckpointSlotOffset(1) + 9, "\x7f");
  DumpRun summary = Dump({store_});
  EXPECT_EQ(summary.exit_code, 1);
  EXPECT_NE(summary.err.find("CHECKPOINT"), std::string::npos) << summary.err;
  ExpectProblemAt(store_ + "/CHECKPOINT", 0, "");
}

}  // namespace
}  // namespace delaybridge::dump
