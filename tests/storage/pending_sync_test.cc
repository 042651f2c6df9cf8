// Two-phase group commit (DelayLogStore::BeginSync / PendingSync::Run / FinishSync): the owner
// thread keeps appending, reading, evicting, parking and deleting hours while Run() fdatasyncs
// on another thread. Checked against an in-memory model: every record readable at all times,
// durable_sequence() advancing to covered_sequence(), a clean reopen, and crash images taken
// right after FinishSync that hold exactly the covered records without head tables claiming
// more. Plus the misuse cases (second BeginSync, Sync or Close in flight, failed Run).
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <map>
#include <random>
#include <thread>

#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "storage/heads_file.h"
#include "tests/storage/open_store.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

using delaybridge::testing::TempDir;
using testing::OpenStore;

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kBaseHour = kBaseMs / kMsPerHour;

struct ModelRecord {
  uint64_t sequence;
  int64_t deliver_at_ms;
  std::string payload;
};

// The records a store must hold, per epoch second in arrival order, with their sequences.
class Model {
 public:
  explicit Model(uint32_t seed) : random_(seed) {}

  std::mt19937& random() { return random_; }

  // Appends count records to random seconds of hours [first_hour, first_hour + hours).
  void AppendSome(DelayLogStore* store, int count, int64_t first_hour, int hours) {
    for (int i = 0; i < count; ++i) {
      int64_t hour = first_hour + static_cast<int64_t>(random_() % hours);
      // Few seconds per hour, so that chains grow.
      int64_t deliver_at_ms =
          hour * kMsPerHour + (random_() % 8) * 37'000 + static_cast<int64_t>(random_() % 1000);
      std::string payload = "seq" + std::to_string(store->last_sequence() + 1) + "-" +
                            std::string(random_() % 300, static_cast<char>('a' + i % 26));
      Result<AppendResult> r = store->Append(deliver_at_ms, payload);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      std::vector<ModelRecord>& chain = seconds_[deliver_at_ms / 1000];
      ASSERT_EQ(r->ordinal, chain.size());
      chain.push_back({r->sequence, deliver_at_ms, std::move(payload)});
    }
  }

  void DeleteHoursBefore(DelayLogStore* store, int64_t epoch_hour) {
    Status s = store->DeleteHoursBefore(epoch_hour * kMsPerHour);
    ASSERT_TRUE(s.ok()) << s.ToString();
    seconds_.erase(seconds_.begin(), seconds_.lower_bound(epoch_hour * kSecondsPerHour));
  }

  uint64_t CountUpTo(uint64_t max_sequence) const {
    uint64_t n = 0;
    for (const auto& [second, chain] : seconds_) n += ChainUpTo(chain, max_sequence);
    return n;
  }

  // The store holds exactly the records with sequence <= max_sequence (in hours still present),
  // in arrival order with ordinals 0, 1, ...; with at_least, it may hold later ones after them.
  void Check(DelayLogStore* store, uint64_t max_sequence, bool at_least = false) const {
    for (const auto& [second, chain] : seconds_) {
      size_t expected = ChainUpTo(chain, max_sequence);
      std::vector<StoredRecord> out;
      Status s = store->ReadSecond(second, &out);
      ASSERT_TRUE(s.ok()) << s.ToString();
      if (at_least) {
        ASSERT_GE(out.size(), expected) << "second " << second;
      } else {
        ASSERT_EQ(out.size(), expected) << "second " << second;
      }
      for (size_t k = 0; k < out.size(); ++k) {
        ASSERT_EQ(out[k].ordinal, k);
        if (k >= chain.size()) continue;  // at_least: written after the model's bound
        ASSERT_EQ(out[k].payload, chain[k].payload) << "second " << second << " ordinal " << k;
        ASSERT_EQ(out[k].deliver_at_ms, chain[k].deliver_at_ms);
      }
    }
    if (at_least) return;
    // No second outside the model holds records.
    int64_t from = 0;
    for (;;) {
      Result<std::optional<int64_t>> next = store->NextNonEmptySecond(from, kMaxDeliverAtMs / 1000);
      ASSERT_TRUE(next.ok()) << next.status().ToString();
      if (!next->has_value()) break;
      auto it = seconds_.find(**next);
      ASSERT_TRUE(it != seconds_.end() && ChainUpTo(it->second, max_sequence) > 0)
          << "unexpected records in second " << **next;
      from = **next + 1;
    }
  }

 private:
  static size_t ChainUpTo(const std::vector<ModelRecord>& chain, uint64_t max_sequence) {
    size_t n = 0;
    while (n < chain.size() && chain[n].sequence <= max_sequence) ++n;
    return n;
  }

  std::mt19937 random_;
  std::map<int64_t, std::vector<ModelRecord>> seconds_;
};

// Runs the PendingSync on its own thread. With gated, Run() starts only after Release(), so the
// owner's work in between deterministically happens before the fdatasyncs; otherwise they race.
class RunOnThread {
 public:
  RunOnThread(PendingSync* sync, bool gated) {
    std::shared_future<void> gate = gate_.get_future().share();
    thread_ = std::thread([this, sync, gated, gate] {
      if (gated) gate.wait();
      status_ = sync->Run();
    });
  }
  ~RunOnThread() {
    if (thread_.joinable()) Join();
  }
  Status Join() {
    if (!released_) gate_.set_value();
    released_ = true;
    thread_.join();
    return status_;
  }

 private:
  std::promise<void> gate_;
  bool released_ = false;
  std::thread thread_;
  Status status_;
};

RecoveryReport ReopenClean(const std::string& dir, std::unique_ptr<DelayLogStore>* store) {
  RecoveryReport report;
  *store = OpenStore(dir, 4, &report);
  for (const auto& p : report.problems) ADD_FAILURE() << p.file << "@" << p.offset << " " << p.what;
  EXPECT_EQ(report.truncated_bytes, 0u);
  EXPECT_EQ(report.records_dropped, 0u);
  return report;
}

TEST(PendingSyncTest, OwnerKeepsWorkingWhileRunExecutesOnAnotherThread) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir dir("storage-test", TempDir::Place::kMemory);
    size_t max_open_hours = 1 + seed % 3;
    std::unique_ptr<DelayLogStore> store = OpenStore(dir.path(), max_open_hours);
    ASSERT_NE(store, nullptr);
    Model model(seed);
    int64_t floor_hour = kBaseHour;
    for (int round = 0; round < 16; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      // Hours from just below the retention floor (deleted hours come back) to a few above.
      model.AppendSome(store.get(), static_cast<int>(model.random()() % 200), floor_hour - 1, 7);
      if (HasFatalFailure()) return;
      uint64_t durable_before = store->durable_sequence();
      Result<std::unique_ptr<PendingSync>> begun = store->BeginSync();
      ASSERT_TRUE(begun.ok()) << begun.status().ToString();
      std::unique_ptr<PendingSync> sync = std::move(begun).value();
      uint64_t covered = sync->covered_sequence();
      EXPECT_EQ(covered, store->last_sequence());
      RunOnThread run(sync.get(), /*gated=*/model.random()() % 2 == 0);

      // In flight: appends evict, park and unpark hours; retention unlinks files.
      model.AppendSome(store.get(), static_cast<int>(model.random()() % 200), floor_hour - 1, 7);
      if (HasFatalFailure()) return;
      if (model.random()() % 3 == 0) {
        floor_hour += 1;
        model.DeleteHoursBefore(store.get(), floor_hour);
        model.AppendSome(store.get(), 5, floor_hour - 1, 2);
        if (HasFatalFailure()) return;
      }
      model.Check(store.get(), UINT64_MAX);
      if (HasFatalFailure()) return;
      EXPECT_TRUE(store->sync_in_flight());
      EXPECT_EQ(store->durable_sequence(), durable_before);

      Status run_status = run.Join();
      ASSERT_TRUE(run_status.ok()) << run_status.ToString();
      Status finished = store->FinishSync(std::move(sync), run_status);
      ASSERT_TRUE(finished.ok()) << finished.ToString();
      EXPECT_FALSE(store->sync_in_flight());
      EXPECT_EQ(store->durable_sequence(), covered);
      if (round % 4 == 3) {
        // The appends made in flight are covered by the next sync.
        ASSERT_TRUE(store->Sync().ok());
        EXPECT_EQ(store->durable_sequence(), store->last_sequence());
      }
    }
    model.Check(store.get(), UINT64_MAX);
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store->Close().ok());
    store.reset();
    RecoveryReport report = ReopenClean(dir.path(), &store);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(report.records, model.CountUpTo(UINT64_MAX));
    model.Check(store.get(), UINT64_MAX);
    if (HasFatalFailure()) return;
  }
}

// Sizes of the data and index files, by name.
std::map<std::string, uint64_t> LogAndIndexSizes(const std::string& dir) {
  std::map<std::string, uint64_t> sizes;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".log") || name.ends_with(".idx")) sizes[name] = e.file_size();
  }
  return sizes;
}

// The least a power cut right after FinishSync can leave: each file the sync covered as it was at
// BeginSync (every later byte lost), hour files created after BeginSync gone (their directory
// entries were never fsynced), head tables as written (they are written without fdatasync, but
// may just as well have reached the disk).
void CopyAsCrashImage(const std::string& from, const std::string& to,
                      const std::map<std::string, uint64_t>& sizes_at_begin) {
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    std::string name = e.path().filename().string();
    std::string hour_name = name.substr(0, name.find('.'));
    if (!sizes_at_begin.contains(hour_name + ".log")) continue;
    std::filesystem::copy_file(e.path(), to + "/" + name);
    if (auto it = sizes_at_begin.find(name); it != sizes_at_begin.end()) {
      std::filesystem::resize_file(to + "/" + name, it->second);
    }
  }
}

void CopyAll(const std::string& from, const std::string& to) {
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    std::filesystem::copy_file(e.path(), to + "/" + e.path().filename().string());
  }
}

// Opens a crash image that must hold exactly the records up to max_sequence, with nothing to
// repair: no head table claiming entries the image lacks, no torn tail.
void CheckCrashImage(const std::string& live, const std::map<std::string, uint64_t>& sizes,
                     const Model& model, uint64_t max_sequence) {
  TempDir image("storage-test", TempDir::Place::kMemory);
  CopyAsCrashImage(live, image.path(), sizes);
  std::unique_ptr<DelayLogStore> copy;
  RecoveryReport report = ReopenClean(image.path(), &copy);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(report.records, model.CountUpTo(max_sequence));
  model.Check(copy.get(), max_sequence);
}

TEST(PendingSyncTest, CrashImagesDuringAndRightAfterASyncHoldEveryDurableRecord) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TempDir live("storage-test", TempDir::Place::kMemory);
    std::unique_ptr<DelayLogStore> store = OpenStore(live.path(), 1 + seed % 3);
    ASSERT_NE(store, nullptr);
    Model model(seed);
    int64_t floor_hour = kBaseHour;
    std::map<std::string, uint64_t> durable_sizes;  // at BeginSync of the last finished sync
    for (int round = 0; round < 5; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      // Appends only at or above the floor: no hour is recreated under a name the crash image
      // cuts by its old size.
      model.AppendSome(store.get(), 50 + static_cast<int>(model.random()() % 200), floor_hour, 5);
      if (HasFatalFailure()) return;
      Result<std::unique_ptr<PendingSync>> begun = store->BeginSync();
      ASSERT_TRUE(begun.ok()) << begun.status().ToString();
      std::unique_ptr<PendingSync> sync = std::move(begun).value();
      std::map<std::string, uint64_t> sizes_at_begin = LogAndIndexSizes(live.path());
      uint64_t covered = sync->covered_sequence();
      RunOnThread run(sync.get(), /*gated=*/model.random()() % 2 == 0);
      // In flight: new hours above the old ones, eviction and parking of covered ones.
      model.AppendSome(store.get(), 100, floor_hour, 7);
      if (HasFatalFailure()) return;
      if (round == 2) {
        floor_hour += 1;
        model.DeleteHoursBefore(store.get(), floor_hour);
      }
      {
        SCOPED_TRACE("crash in flight: everything since the last finished sync lost");
        CheckCrashImage(live.path(), durable_sizes, model, store->durable_sequence());
        if (HasFatalFailure()) return;
      }
      Status run_status = run.Join();
      ASSERT_TRUE(run_status.ok()) << run_status.ToString();
      ASSERT_TRUE(store->FinishSync(std::move(sync), run_status).ok());
      durable_sizes = sizes_at_begin;
      // After it: more appends, buffered or written to the page cache (reads flush them).
      model.AppendSome(store.get(), 100, floor_hour, 7);
      if (HasFatalFailure()) return;
      model.Check(store.get(), UINT64_MAX);
      if (HasFatalFailure()) return;
      {
        SCOPED_TRACE("crash after FinishSync: everything after BeginSync lost");
        CheckCrashImage(live.path(), durable_sizes, model, covered);
        if (HasFatalFailure()) return;
      }
      {
        SCOPED_TRACE("crash after FinishSync: page cache kept");
        TempDir image("storage-test", TempDir::Place::kMemory);
        CopyAll(live.path(), image.path());
        RecoveryReport report;
        std::unique_ptr<DelayLogStore> copy = OpenStore(image.path(), 4, &report);
        ASSERT_NE(copy, nullptr);
        model.Check(copy.get(), covered, /*at_least=*/true);
        if (HasFatalFailure()) return;
      }
    }
    ASSERT_TRUE(store->Close().ok());
  }
}

// An hour whose head table falls due is saved by FinishSync from the snapshot taken at
// BeginSync: it covers exactly the entries that sync made durable, not the ones appended in
// flight, even though the hour was evicted and reopened meanwhile.
TEST(PendingSyncTest, HeadTableSavedByFinishSyncCoversOnlyWhatTheSyncCovered) {
  TempDir live("storage-test", TempDir::Place::kMemory);
  std::unique_ptr<DelayLogStore> store = OpenStore(live.path(), 1);
  ASSERT_NE(store, nullptr);
  const uint64_t synced_before = 100;
  const uint64_t due = kHeadsSaveEveryEntries + synced_before;
  std::map<std::string, uint64_t> sizes_durable;  // after the Sync of the first records
  for (uint64_t i = 0; i < due; ++i) {
    if (i == synced_before) {
      ASSERT_TRUE(store->Sync().ok());
      sizes_durable = LogAndIndexSizes(live.path());
    }
    ASSERT_TRUE(store->Append(kBaseMs + static_cast<int64_t>(i % 3600) * 1000, "x").ok());
  }
  Result<std::unique_ptr<PendingSync>> begun = store->BeginSync();
  ASSERT_TRUE(begun.ok()) << begun.status().ToString();
  std::unique_ptr<PendingSync> sync = std::move(begun).value();
  std::map<std::string, uint64_t> sizes_at_begin = LogAndIndexSizes(live.path());
  RunOnThread run(sync.get(), /*gated=*/true);
  // The hot hour is evicted (parked: it is covered by the sync in flight), unparked by an
  // append, evicted again dirty.
  ASSERT_TRUE(store->Append(kBaseMs + kMsPerHour, "next hour").ok());
  ASSERT_TRUE(store->Append(kBaseMs + 5, "in flight").ok());
  ASSERT_TRUE(store->Append(kBaseMs + kMsPerHour + 1, "next hour again").ok());
  {
    SCOPED_TRACE("crash in flight: nothing of the running sync reached the disk");
    TempDir image("storage-test", TempDir::Place::kMemory);
    CopyAsCrashImage(live.path(), image.path(), sizes_durable);
    std::unique_ptr<DelayLogStore> copy;
    RecoveryReport report = ReopenClean(image.path(), &copy);
    EXPECT_EQ(report.records, synced_before);
  }
  Status run_status = run.Join();
  ASSERT_TRUE(store->FinishSync(std::move(sync), run_status).ok());

  std::string heads_path = live.path() + "/2026-11-22T16.heads";
  Result<std::optional<HeadsSlot>> slot = LoadHeads(heads_path, kBaseHour);
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  ASSERT_TRUE(slot->has_value());
  EXPECT_EQ((*slot)->covered, due);
  EXPECT_EQ((*slot)->cells[0].count, (due + 3599) / 3600);  // without "in flight"

  {
    SCOPED_TRACE("crash after FinishSync: everything after BeginSync lost");
    TempDir image("storage-test", TempDir::Place::kMemory);
    CopyAsCrashImage(live.path(), image.path(), sizes_at_begin);
    std::unique_ptr<DelayLogStore> copy;
    RecoveryReport report = ReopenClean(image.path(), &copy);
    EXPECT_EQ(report.records, due);
  }

  // The next sync covers the in-flight append: the parked hour is synced and closed, its table
  // then covers everything.
  ASSERT_TRUE(store->Sync().ok());
  slot = LoadHeads(heads_path, kBaseHour);
  ASSERT_TRUE(slot.ok() && slot->has_value());
  EXPECT_EQ((*slot)->covered, due + 1);
  ASSERT_TRUE(store->Close().ok());
}

TEST(PendingSyncTest, OnlyOneSyncInFlight) {
  TempDir dir("storage-test", TempDir::Place::kMemory);
  std::unique_ptr<DelayLogStore> store = OpenStore(dir.path(), 2);
  ASSERT_TRUE(store->Append(kBaseMs, "a").ok());
  Result<std::unique_ptr<PendingSync>> first = store->BeginSync();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(store->BeginSync().status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(store->Sync().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(store->Close().code(), Status::Code::kFailedPrecondition);
  // None of these poisoned the store or lost the sync in flight.
  ASSERT_TRUE(store->Append(kBaseMs + 1, "b").ok());
  Status run_status = (*first)->Run();
  EXPECT_EQ((*first)->Run().code(), Status::Code::kFailedPrecondition);  // once only
  ASSERT_TRUE(store->FinishSync(std::move(first).value(), run_status).ok());
  EXPECT_EQ(store->durable_sequence(), 1u);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->durable_sequence(), 2u);
  ASSERT_TRUE(store->Close().ok());
}

TEST(PendingSyncTest, FinishSyncRejectsAPendingSyncOfAnotherStore) {
  TempDir dir_a("storage-test", TempDir::Place::kMemory);
  TempDir dir_b("storage-test", TempDir::Place::kMemory);
  std::unique_ptr<DelayLogStore> a = OpenStore(dir_a.path(), 2);
  std::unique_ptr<DelayLogStore> b = OpenStore(dir_b.path(), 2);
  ASSERT_TRUE(a->Append(kBaseMs, "a").ok());
  Result<std::unique_ptr<PendingSync>> sync_a = a->BeginSync();
  Result<std::unique_ptr<PendingSync>> sync_b = b->BeginSync();
  ASSERT_TRUE(sync_a.ok() && sync_b.ok());
  Status run_status = (*sync_a)->Run();
  EXPECT_EQ(b->FinishSync(std::move(sync_a).value(), run_status).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(b->FinishSync(nullptr, Status::Ok()).code(), Status::Code::kInvalidArgument);
  // b still has its own in flight and is not poisoned.
  EXPECT_TRUE(b->sync_in_flight());
  run_status = (*sync_b)->Run();
  EXPECT_TRUE(b->FinishSync(std::move(sync_b).value(), run_status).ok());
  EXPECT_TRUE(b->Append(kBaseMs, "b").ok());
  // a lost its PendingSync to a wrong call, so it can never finish it: Close says so.
  EXPECT_EQ(a->Close().code(), Status::Code::kFailedPrecondition);
}

TEST(PendingSyncTest, FailedRunPoisonsTheStoreLikeAFailedSync) {
  for (bool run_called : {true, false}) {
    SCOPED_TRACE(run_called ? "Run reported a failure" : "Run never called, ok claimed");
    TempDir dir("storage-test", TempDir::Place::kMemory);
    std::unique_ptr<DelayLogStore> store = OpenStore(dir.path(), 2);
    ASSERT_TRUE(store->Append(kBaseMs, "a").ok());
    Result<std::unique_ptr<PendingSync>> sync = store->BeginSync();
    ASSERT_TRUE(sync.ok());
    Status run_status = Status::Ok();
    if (run_called) {
      ASSERT_TRUE((*sync)->Run().ok());
      run_status = Status::IOError("fdatasync injected failure");
    }
    Status finished = store->FinishSync(std::move(sync).value(), run_status);
    EXPECT_FALSE(finished.ok());
    EXPECT_EQ(store->durable_sequence(), 0u);
    EXPECT_FALSE(store->sync_in_flight());
    Result<AppendResult> append = store->Append(kBaseMs + 1, "b");
    EXPECT_EQ(append.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(append.status().message().find("failed to sync"), std::string::npos)
        << append.status().message();
    EXPECT_EQ(store->Sync().code(), Status::Code::kFailedPrecondition);
    EXPECT_EQ(store->BeginSync().status().code(), Status::Code::kFailedPrecondition);
    EXPECT_FALSE(store->Close().ok());
    store.reset();
    // Reopening recovers whatever reached the files.
    std::unique_ptr<DelayLogStore> reopened = OpenStore(dir.path(), 2);
    ASSERT_NE(reopened, nullptr);
    EXPECT_TRUE(reopened->Append(kBaseMs + 2, "c").ok());
  }
}

TEST(PendingSyncTest, EmptyWhenNothingWasAppendedSinceTheLastSync) {
  TempDir dir("storage-test", TempDir::Place::kMemory);
  std::unique_ptr<DelayLogStore> store = OpenStore(dir.path(), 2);
  for (int round = 0; round < 2; ++round) {
    Result<std::unique_ptr<PendingSync>> sync = store->BeginSync();
    ASSERT_TRUE(sync.ok());
    EXPECT_TRUE((*sync)->empty());
    EXPECT_EQ((*sync)->covered_sequence(), store->last_sequence());
    Status run_status = (*sync)->Run();
    ASSERT_TRUE(store->FinishSync(std::move(sync).value(), run_status).ok());
    EXPECT_EQ(store->durable_sequence(), store->last_sequence());
    ASSERT_TRUE(store->Append(kBaseMs, "a").ok());
    ASSERT_TRUE(store->Sync().ok());
  }
  // An hour file created while a sync is in flight (directory entry included) is left for the
  // next one, which is therefore not empty.
  Result<std::unique_ptr<PendingSync>> sync = store->BeginSync();
  ASSERT_TRUE(sync.ok() && (*sync)->empty());
  ASSERT_TRUE(store->Append(kBaseMs + 5 * kMsPerHour, "new hour").ok());
  Status run_status = (*sync)->Run();
  ASSERT_TRUE(store->FinishSync(std::move(sync).value(), run_status).ok());
  EXPECT_EQ(store->durable_sequence(), 2u);
  sync = store->BeginSync();
  ASSERT_TRUE(sync.ok());
  EXPECT_FALSE((*sync)->empty());
  EXPECT_EQ((*sync)->covered_sequence(), 3u);
  run_status = (*sync)->Run();
  ASSERT_TRUE(store->FinishSync(std::move(sync).value(), run_status).ok());
  EXPECT_EQ(store->durable_sequence(), 3u);
  ASSERT_TRUE(store->Close().ok());
}

}  // namespace
}  // namespace delaybridge::storage
