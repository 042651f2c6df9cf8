#include "storage/delay_log_store.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "storage/format.h"
#include "storage/heads_file.h"
#include "storage/hour_appender.h"
#include "storage/hour_files.h"
#include "storage/hour_recovery.h"
#include "storage/parallel_sync.h"
#include "storage/posix_file.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

// Parked hours (evicted with unsynced appends) keep a 28.8 KB head table each until the next
// Sync; past this many, they are synced early. Bounds their memory to about 30 MB while
// letting a month of hours (720) be appended to between two syncs without early fdatasyncs.
constexpr size_t kMaxParkedHours = 1024;

}  // namespace

struct DelayLogStore::Impl {
  // A closed hour's head table, kept for CountInSecond / NextNonEmptySecond / ReadSecond.
  struct CachedCells {
    std::unique_ptr<HeadCells> cells;
    uint64_t last_used = 0;
  };

  // The life of an hour. Every hour present is in `hours`, and in at most one of `open`,
  // `parked` and `cached`:
  //   closed:  in `hours` only (its state is current there), or also in `cached` (its head
  //            table in memory for reads);
  //   open:    in `open`: an appender with both files open, the LRU set of max_open_hours;
  //   parked:  in `parked`: evicted from `open` with appends no sync has covered yet (or a sync
  //            in flight), files closed, head table in memory; the next sync closes it.
  // AppenderFor moves closed or parked to open (evicting the least recently used open hour:
  // clean to closed, unsynced to parked); FinishSync and SyncParked move parked to closed;
  // RemoveHour ends any of them. CheckHourStates asserts this after every move.
  StoreOptions options;
  size_t max_open_hours = 1;
  std::map<int64_t, HourState> hours;  // every hour present; state of open ones is stale
  std::map<int64_t, std::unique_ptr<HourAppender>> open;    // descriptors held, LRU-bounded
  std::map<int64_t, std::unique_ptr<HourAppender>> parked;  // evicted, dirty or in flight
  std::map<int64_t, CachedCells> cached;
  uint64_t tick = 0;  // LRU clock
  uint64_t last_sequence = 0;
  uint64_t durable_sequence = 0;
  bool dir_dirty = false;  // hour files created since the last directory fsync (BeginSync)
  bool closed = false;
  uint64_t syncs_begun = 0;
  uint64_t sync_in_flight = 0;  // id of the PendingSync BeginSync handed out, 0 when none
  // A failed fdatasync may have dropped dirty pages that a retry would then report as synced
  // ("fsyncgate"), so after one the store refuses to claim anything durable again.
  Status sync_failure;

  Status Usable() const;

  Status Recover(RecoveryReport* report);
  Result<HourAppender*> AppenderFor(int64_t epoch_hour);
  Status EvictLeastRecentlyUsed();
  Result<const HeadCells*> CellsOf(int64_t epoch_hour);
  Status RemoveHour(int64_t epoch_hour);
  Result<std::unique_ptr<PendingSync>> BeginSync();
  Status FinishSync(const PendingSync& sync);
  Status SyncParked();
  // A BeginSync that failed part-way: the hours it started are dirty again.
  void AbortStartedSyncs();
  uint64_t EntriesOf(int64_t epoch_hour) const;
  // The hour-life invariants above (test builds only: O(hours)).
  void CheckHourStates() const;
};

void DelayLogStore::Impl::CheckHourStates() const {
#ifndef NDEBUG
  assert(open.size() <= max_open_hours);
  for (const auto& [hour, appender] : open) {
    assert(hours.count(hour) && !parked.count(hour) && !cached.count(hour));
  }
  for (const auto& [hour, appender] : parked) {
    assert(hours.count(hour) && !cached.count(hour));
  }
  for (const auto& [hour, cells] : cached) assert(hours.count(hour));
#endif
}

Result<std::unique_ptr<PendingSync>> DelayLogStore::Impl::BeginSync() {
  std::unique_ptr<PendingSync> sync(new PendingSync());
  sync->covered_sequence_ = last_sequence;
  for (auto* hours_map : {&open, &parked}) {
    for (auto& [hour, appender] : *hours_map) {
      // A parked hour also waits for its index to be synced before it is closed.
      const bool due = appender->dirty() || (hours_map == &parked && !appender->index_synced());
      if (!due) continue;
      Status s = appender->StartSync(&sync->files_);
      if (!s.ok()) {
        AbortStartedSyncs();
        return s.WithContext("sync hour " + HourName(hour));
      }
    }
  }
  if (dir_dirty) {
    sync->dir_to_sync_ = options.dir;
    dir_dirty = false;
  }
  sync->store_ = this;
  sync->id_ = ++syncs_begun;
  sync_in_flight = sync->id_;
  return sync;
}

void DelayLogStore::Impl::AbortStartedSyncs() {
  for (auto* hours_map : {&open, &parked}) {
    for (auto& [hour, appender] : *hours_map) {
      if (appender->sync_in_flight()) appender->AbortSync();
    }
  }
}

Status DelayLogStore::Impl::FinishSync(const PendingSync& sync) {
  // Every file the sync covered is durable now: the head tables snapshotted at BeginSync may be
  // written (docs/storage-format.md "Writing and the sync order").
  for (auto* hours_map : {&open, &parked}) {
    for (auto& [hour, appender] : *hours_map) {
      if (!appender->sync_in_flight()) continue;
      Status s = appender->FinishSync();
      if (!s.ok()) return s.WithContext("save head table of hour " + HourName(hour));
    }
  }
  // Parked hours appended to since BeginSync stay parked for the next sync (an append to a
  // parked hour unparks it, so only a later eviction can park it dirty again).
  for (auto it = parked.begin(); it != parked.end();) {
    // Parked while open (its index not synced by this sync): the next sync syncs its index.
    if (it->second->dirty() || !it->second->index_synced()) {
      ++it;
      continue;
    }
    if (Status s = it->second->Close(); !s.ok()) {
      return s.WithContext("close hour " + HourName(it->first));
    }
    hours[it->first] = it->second->state();
    it = parked.erase(it);
  }
  durable_sequence = sync.covered_sequence_;
  CheckHourStates();
  return Status::Ok();
}

Status DelayLogStore::Impl::SyncParked() {
  for (auto& [hour, appender] : parked) {
    if (Status s = appender->Close(); !s.ok()) return s.WithContext("close hour " + HourName(hour));
    hours[hour] = appender->state();
  }
  parked.clear();
  CheckHourStates();
  return Status::Ok();
}

uint64_t DelayLogStore::Impl::EntriesOf(int64_t epoch_hour) const {
  if (auto it = open.find(epoch_hour); it != open.end()) return it->second->state().entries;
  if (auto it = parked.find(epoch_hour); it != parked.end()) return it->second->state().entries;
  return hours.at(epoch_hour).entries;
}

Status DelayLogStore::Impl::Recover(RecoveryReport* report) {
  Result<std::map<int64_t, HourFilesPresent>> found = ScanHourFiles(options.dir);
  if (!found.ok()) return found.status();
  // Hours with leftovers only are recovered too: RecoverHour removes them.
  for (const auto& [hour, files] : *found) {
    Result<std::optional<HourState>> state = RecoverHour(options.dir, hour, report);
    if (!state.ok()) return state.status().WithContext("recover hour " + HourName(hour));
    if (state->has_value()) hours[hour] = **state;
  }
  return SyncDir(options.dir);
}

Status DelayLogStore::Impl::Usable() const {
  if (closed) return Status::FailedPrecondition("store " + options.dir + " is closed");
  if (!sync_failure.ok()) {
    return Status::FailedPrecondition(
        "store " + options.dir +
        " failed to sync earlier; reopen it to recover: " + sync_failure.message());
  }
  return Status::Ok();
}

Status DelayLogStore::Impl::EvictLeastRecentlyUsed() {
  auto victim = std::min_element(open.begin(), open.end(), [](const auto& a, const auto& b) {
    return a.second->last_used() < b.second->last_used();
  });
  int64_t hour = victim->first;
  std::unique_ptr<HourAppender> appender = std::move(victim->second);
  open.erase(victim);
  // An hour with unsynced appends or index entries, or covered by a sync in flight, is parked
  // (no fdatasync now; the next or the running sync covers it, and only then may its head table
  // be saved). Too many parked hours are synced early, which bounds their memory.
  bool unsynced = appender->dirty() || appender->sync_in_flight() || !appender->index_synced();
  Status s = unsynced ? appender->Park() : appender->Close();
  if (!s.ok()) {
    sync_failure = s.WithContext("close hour " + HourName(hour));
    return sync_failure;
  }
  if (unsynced) {
    parked[hour] = std::move(appender);
    if (parked.size() > kMaxParkedHours) s = SyncParked();
  } else {
    hours[hour] = appender->state();
  }
  if (!s.ok()) sync_failure = s;
  return s;
}

Result<HourAppender*> DelayLogStore::Impl::AppenderFor(int64_t epoch_hour) {
  auto it = open.find(epoch_hour);
  if (it != open.end()) {
    it->second->set_last_used(++tick);
    return it->second.get();
  }
  if (open.size() >= max_open_hours) {
    Status s = EvictLeastRecentlyUsed();
    if (!s.ok()) return s;
  }
  if (auto it = parked.find(epoch_hour); it != parked.end()) {
    // On failure the hour stays parked, whole: the next sync still covers its appends, and its
    // end is still known (Unpark changes nothing unless both files open).
    if (Status s = it->second->Unpark(); !s.ok()) return s.WithContext("reopen parked hour");
    std::unique_ptr<HourAppender> appender = std::move(it->second);
    parked.erase(it);
    appender->set_last_used(++tick);
    HourAppender* raw = appender.get();
    open[epoch_hour] = std::move(appender);
    CheckHourStates();
    return raw;
  }
  auto known = hours.find(epoch_hour);
  Result<std::unique_ptr<HourAppender>> appender =
      known != hours.end() ? HourAppender::Reopen(options.dir, epoch_hour, known->second)
                           : HourAppender::Create(options.dir, epoch_hour);
  if (!appender.ok()) return appender.status().WithContext("open hour " + HourName(epoch_hour));
  if (known == hours.end()) {
    hours[epoch_hour] = (*appender)->state();
    dir_dirty = true;
  }
  cached.erase(epoch_hour);  // the appender's table is now the live one
  (*appender)->set_last_used(++tick);
  HourAppender* raw = appender->get();
  open[epoch_hour] = std::move(*appender);
  CheckHourStates();
  return raw;
}

Result<const HeadCells*> DelayLogStore::Impl::CellsOf(int64_t epoch_hour) {
  if (auto it = open.find(epoch_hour); it != open.end()) return &it->second->cells();
  if (auto it = parked.find(epoch_hour); it != parked.end()) return &it->second->cells();
  if (auto it = cached.find(epoch_hour); it != cached.end()) {
    it->second.last_used = ++tick;
    return it->second.cells.get();
  }
  const HourState& state = hours.at(epoch_hour);
  Result<std::optional<HeadsSlot>> slot =
      LoadHeads(PathsOfHour(options.dir, epoch_hour).heads, epoch_hour);
  if (!slot.ok()) return slot.status();
  uint64_t covered = slot->has_value() ? (*slot)->covered : 0;
  if (covered != state.entries) {
    return Status::Corruption(PathsOfHour(options.dir, epoch_hour).heads + ": covers " +
                              std::to_string(covered) + " of " + std::to_string(state.entries) +
                              " entries");
  }
  if (cached.size() >= max_open_hours) {
    cached.erase(std::min_element(cached.begin(), cached.end(), [](const auto& a, const auto& b) {
      return a.second.last_used < b.second.last_used;
    }));
  }
  CachedCells& entry = cached[epoch_hour];
  entry.cells = std::make_unique<HeadCells>();
  if (slot->has_value()) *entry.cells = (*slot)->cells;
  entry.last_used = ++tick;
  CheckHourStates();
  return entry.cells.get();
}

Status DelayLogStore::Impl::RemoveHour(int64_t epoch_hour) {
  // The appender's buffered records are delivered by the caller's own statement: drop them.
  open.erase(epoch_hour);
  parked.erase(epoch_hour);
  cached.erase(epoch_hour);
  hours.erase(epoch_hour);
  CheckHourStates();
  return RemoveHourFiles(PathsOfHour(options.dir, epoch_hour));
}

Result<std::unique_ptr<DelayLogStore>> DelayLogStore::Open(const StoreOptions& options,
                                                           RecoveryReport* report) {
  if (options.dir.empty()) return Status::InvalidArgument("store directory is empty");
  Status s = CreateDirIfMissing(options.dir);
  if (!s.ok()) return s;
  std::unique_ptr<DelayLogStore> store(new DelayLogStore());
  store->impl_ = std::make_unique<Impl>();
  store->impl_->options = options;
  store->impl_->max_open_hours = std::max<size_t>(1, options.max_open_hours);
  RecoveryReport local_report;
  s = store->impl_->Recover(report != nullptr ? report : &local_report);
  if (!s.ok()) {
    store->impl_->closed = true;  // nothing was opened for appending
    return s.WithContext("open store " + options.dir);
  }
  return store;
}

DelayLogStore::~DelayLogStore() {
  if (impl_ != nullptr && !impl_->closed) Close();
}

Status DelayLogStore::Close() {
  if (impl_->closed) {
    return Status::FailedPrecondition("store " + impl_->options.dir + " is closed");
  }
  if (impl_->sync_in_flight != 0) {
    return Status::FailedPrecondition("store " + impl_->options.dir +
                                      " has a sync in flight; FinishSync it before Close");
  }
  Status s = impl_->sync_failure;
  if (s.ok()) s = Sync();
  for (auto& [hour, appender] : impl_->open) {
    if (!s.ok()) break;
    s = appender->Close();
    if (s.ok()) impl_->hours[hour] = appender->state();
  }
  // After a failure nothing more may be claimed durable; recovery at the next Open sorts the
  // files out.
  impl_->open.clear();
  impl_->parked.clear();
  impl_->closed = true;
  return s;
}

Result<AppendResult> DelayLogStore::Append(int64_t deliver_at_ms, std::string_view payload) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  if (deliver_at_ms < 0 || deliver_at_ms >= kMaxDeliverAtMs) {
    return Status::InvalidArgument("deliver_at_ms " + std::to_string(deliver_at_ms) +
                                   " is outside [0, " + std::to_string(kMaxDeliverAtMs) + ")");
  }
  if (payload.size() > impl_->options.max_record_bytes) {
    return Status::InvalidArgument("record of " + std::to_string(payload.size()) +
                                   " bytes exceeds max_record_bytes " +
                                   std::to_string(impl_->options.max_record_bytes));
  }
  int64_t hour = HourOfMs(deliver_at_ms);
  Result<HourAppender*> appender = impl_->AppenderFor(hour);
  if (!appender.ok()) return appender.status();
  Result<uint32_t> ordinal = (*appender)->Append(deliver_at_ms, payload);
  if (!ordinal.ok()) return ordinal.status().WithContext("append to hour " + HourName(hour));
  AppendResult result;
  result.second = SecondOfMs(deliver_at_ms);
  result.ordinal = *ordinal;
  result.sequence = ++impl_->last_sequence;
  return result;
}

Status DelayLogStore::Sync() {
  Result<std::unique_ptr<PendingSync>> sync = BeginSync();
  if (!sync.ok()) return sync.status();
  Status run_status = (*sync)->Run();
  return FinishSync(std::move(sync).value(), run_status);
}

Result<std::unique_ptr<PendingSync>> DelayLogStore::BeginSync() {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  if (impl_->sync_in_flight != 0) {
    return Status::FailedPrecondition("store " + impl_->options.dir +
                                      " already has a sync in flight; FinishSync it first");
  }
  // Nothing was fdatasynced yet, and writes are positional: what a failed write (a full disk)
  // left part of in a file is written whole by the next sync, and what it could not write is
  // still buffered. So a failed BeginSync leaves the store usable; only a failed fdatasync
  // (FinishSync) may have lost pages, and makes it unusable.
  return impl_->BeginSync();
}

Status DelayLogStore::FinishSync(std::unique_ptr<PendingSync> sync, const Status& run_status) {
  if (sync == nullptr || sync->store_ != impl_.get() || sync->id_ != impl_->sync_in_flight) {
    return Status::InvalidArgument("FinishSync of store " + impl_->options.dir +
                                   " given a PendingSync that is not its sync in flight");
  }
  impl_->sync_in_flight = 0;
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  Status s = run_status;
  // The status handed over is trusted only as far as Run agrees: claiming durability for a
  // sync that never ran, or failed, would lose records at the next power cut.
  if (s.ok() && !sync->ran_) {
    s = Status::FailedPrecondition("FinishSync of store " + impl_->options.dir +
                                   " with an ok status but PendingSync::Run was not called");
  }
  if (s.ok()) s = sync->run_status_;
  if (s.ok()) s = impl_->FinishSync(*sync);
  if (!s.ok()) impl_->sync_failure = s;
  return s;
}

bool DelayLogStore::sync_in_flight() const { return impl_->sync_in_flight != 0; }

PendingSync::PendingSync() = default;
PendingSync::~PendingSync() = default;

Status PendingSync::Run() {
  if (ran_) return Status::FailedPrecondition("PendingSync::Run called twice");
  ran_ = true;
  run_status_ = SyncFiles();
  return run_status_;
}

Status PendingSync::SyncFiles() const {
  // All files at once: recovery verifies every entry not covered by a saved head table against
  // its record, so data and index need no order between them, only to be complete before the
  // tables are saved (FinishSync). See docs/storage-format.md "Writing and the sync order".
  std::vector<std::function<Status()>> syncs;
  syncs.reserve(files_.size());
  for (const PosixFile& file : files_) {
    syncs.push_back([&file] { return file.DataSync(); });
  }
  if (Status s = RunConcurrently(syncs); !s.ok()) return s;
  return dir_to_sync_.empty() ? Status::Ok() : SyncDir(dir_to_sync_);
}

uint64_t PendingSync::covered_sequence() const { return covered_sequence_; }
bool PendingSync::empty() const { return files_.empty() && dir_to_sync_.empty(); }

uint64_t DelayLogStore::last_sequence() const { return impl_->last_sequence; }
uint64_t DelayLogStore::durable_sequence() const { return impl_->durable_sequence; }

Status DelayLogStore::ReadSecond(int64_t epoch_second, std::vector<StoredRecord>* out) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  int64_t hour = HourOfSecond(epoch_second);
  if (!impl_->hours.contains(hour)) return Status::Ok();
  if (auto it = impl_->open.find(hour); it != impl_->open.end()) {
    // Unsynced appends become visible to pread once written to the page cache.
    HourAppender& appender = *it->second;
    Status s = appender.Flush();
    if (!s.ok()) return s;
    const HeadCell& cell = appender.cells()[SecondInHour(epoch_second)];
    return ReadSecondChain(appender.index_file(), appender.data_file(), epoch_second, cell,
                           appender.state().entries, out);
  }
  Result<const HeadCells*> cells = impl_->CellsOf(hour);
  if (!cells.ok()) return cells.status();
  const HeadCell& cell = (**cells)[SecondInHour(epoch_second)];
  if (cell.count == 0) return Status::Ok();
  HourPaths paths = PathsOfHour(impl_->options.dir, hour);
  Result<PosixFile> index = PosixFile::Open(paths.index, PosixFile::Mode::kReadOnly);
  if (!index.ok()) return index.status();
  Result<PosixFile> data = PosixFile::Open(paths.data, PosixFile::Mode::kReadOnly);
  if (!data.ok()) return data.status();
  return ReadSecondChain(*index, *data, epoch_second, cell, impl_->EntriesOf(hour), out);
}

Result<std::optional<FoundRecord>> DelayLogStore::FindInHour(int64_t epoch_hour,
                                                             const ArrivalOrder& order) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  if (!impl_->hours.contains(epoch_hour)) return std::optional<FoundRecord>();
  if (auto it = impl_->open.find(epoch_hour); it != impl_->open.end()) {
    // Unsynced appends become visible to pread once written to the page cache.
    HourAppender& appender = *it->second;
    if (Status s = appender.Flush(); !s.ok()) return s;
    return SearchArrivalOrder(appender.index_file(), appender.data_file(), appender.state().entries,
                              order);
  }
  // Parked hours had their buffers written when they were parked; closed ones are whole.
  HourPaths paths = PathsOfHour(impl_->options.dir, epoch_hour);
  Result<PosixFile> index = PosixFile::Open(paths.index, PosixFile::Mode::kReadOnly);
  if (!index.ok()) return index.status();
  Result<PosixFile> data = PosixFile::Open(paths.data, PosixFile::Mode::kReadOnly);
  if (!data.ok()) return data.status();
  return SearchArrivalOrder(*index, *data, impl_->EntriesOf(epoch_hour), order);
}

Result<uint32_t> DelayLogStore::CountInSecond(int64_t epoch_second) {
  int64_t hour = HourOfSecond(epoch_second);
  if (!impl_->hours.contains(hour)) return uint32_t{0};
  Result<const HeadCells*> cells = impl_->CellsOf(hour);
  if (!cells.ok()) return cells.status();
  return (**cells)[SecondInHour(epoch_second)].count;
}

Result<uint64_t> DelayLogStore::CountFromSecond(int64_t from_second) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  const int64_t first_hour = HourOfSecond(from_second);
  uint64_t count = 0;
  for (auto it = impl_->hours.lower_bound(first_hour); it != impl_->hours.end(); ++it) {
    if (it->first != first_hour) {
      count += impl_->EntriesOf(it->first);
      continue;
    }
    Result<const HeadCells*> cells = impl_->CellsOf(first_hour);
    if (!cells.ok()) return cells.status();
    for (int64_t s = SecondInHour(from_second); s < kSecondsPerHour; ++s) {
      count += (**cells)[s].count;
    }
  }
  return count;
}

Result<std::optional<int64_t>> DelayLogStore::NextNonEmptySecond(int64_t from_second,
                                                                 int64_t limit_second) {
  // Only hours with files are visited; inside an hour, the head table answers.
  for (auto it = impl_->hours.lower_bound(HourOfSecond(from_second));
       it != impl_->hours.end() && it->first * kSecondsPerHour < limit_second; ++it) {
    Result<const HeadCells*> cells = impl_->CellsOf(it->first);
    if (!cells.ok()) return cells.status();
    int64_t hour_start = it->first * kSecondsPerHour;
    int64_t begin = std::max(from_second, hour_start);
    int64_t end = std::min(limit_second, hour_start + kSecondsPerHour);
    for (int64_t second = begin; second < end; ++second) {
      if ((**cells)[second - hour_start].count > 0) return std::optional<int64_t>(second);
    }
  }
  return std::optional<int64_t>();
}

Status DelayLogStore::DeleteHoursBefore(int64_t deliver_before_ms) {
  std::vector<int64_t> doomed;
  for (const auto& [hour, state] : impl_->hours) {
    if ((hour + 1) * kMsPerHour > deliver_before_ms) break;
    doomed.push_back(hour);
  }
  for (int64_t hour : doomed) {
    Status s = impl_->RemoveHour(hour);
    if (!s.ok()) return s.WithContext("delete hour " + HourName(hour));
  }
  return doomed.empty() ? Status::Ok() : SyncDir(impl_->options.dir);
}

std::vector<int64_t> DelayLogStore::Hours() const {
  std::vector<int64_t> hours;
  hours.reserve(impl_->hours.size());
  for (const auto& [hour, state] : impl_->hours) hours.push_back(hour);
  return hours;
}

const std::string& DelayLogStore::dir() const { return impl_->options.dir; }

}  // namespace delaybridge::storage
