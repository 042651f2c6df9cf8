#include "storage/delay_log_store.h"

#include <algorithm>
#include <map>

#include "storage/format.h"
#include "storage/hour_appender.h"
#include "storage/hour_files.h"
#include "storage/hour_recovery.h"
#include "storage/hour_table.h"
#include "storage/parallel_sync.h"
#include "storage/posix_file.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {

struct DelayLogStore::Impl {
  explicit Impl(const StoreOptions& store_options)
      : options(store_options), hours(store_options.dir, store_options.max_open_hours) {}

  StoreOptions options;
  HourTable hours;
  uint64_t last_sequence = 0;
  uint64_t durable_sequence = 0;
  bool dir_dirty = false;  // hour files created since the last directory fsync (BeginSync)
  bool closed = false;
  uint64_t syncs_begun = 0;
  uint64_t sync_in_flight = 0;  // id of the PendingSync BeginSync handed out, 0 when none
  // A failed fdatasync may have dropped dirty pages that a retry would then report as synced
  // ("fsyncgate"), so after one the store refuses to claim anything durable again.
  Status sync_failure;

  // Ok, or why the store refuses work. Inline, as every append asks: the usual answer is the
  // test of three flags, and only a refusal calls out to build its message.
  Status Usable() const {
    if (!closed && sync_failure.ok() && hours.failure().ok()) [[likely]] {
      return Status::Ok();
    }
    return Refusal();
  }
  // The message of Usable's refusal; only called when its test failed.
  Status Refusal() const;
  Status Recover(RecoveryReport* report);
  Result<HourAppender*> AppenderFor(int64_t epoch_hour);
  Result<std::unique_ptr<PendingSync>> BeginSync();
  Status FinishSync(const PendingSync& sync);
};

Result<std::unique_ptr<PendingSync>> DelayLogStore::Impl::BeginSync() {
  std::unique_ptr<PendingSync> sync(new PendingSync());
  sync->covered_sequence_ = last_sequence;
  if (Status s = hours.StartSyncs(&sync->files_); !s.ok()) return s;
  if (dir_dirty) {
    sync->dir_to_sync_ = options.dir;
    dir_dirty = false;
  }
  sync->store_ = this;
  sync->id_ = ++syncs_begun;
  sync_in_flight = sync->id_;
  return sync;
}

Status DelayLogStore::Impl::FinishSync(const PendingSync& sync) {
  if (Status s = hours.FinishSyncs(); !s.ok()) return s;
  durable_sequence = sync.covered_sequence_;
  return Status::Ok();
}

Status DelayLogStore::Impl::Recover(RecoveryReport* report) {
  Result<std::map<int64_t, HourFilesPresent>> found = ScanHourFiles(options.dir);
  if (!found.ok()) return found.status();
  // Hours with leftovers only are recovered too: RecoverHour removes them.
  for (const auto& [hour, files] : *found) {
    Result<std::optional<HourState>> state = RecoverHour(options.dir, hour, report);
    if (!state.ok()) return state.status().WithContext("recover hour " + HourName(hour));
    if (state->has_value()) hours.AddClosed(hour, **state);
  }
  return SyncDir(options.dir);
}

Status DelayLogStore::Impl::Refusal() const {
  if (closed) return Status::FailedPrecondition("store " + options.dir + " is closed");
  const Status& failure = !sync_failure.ok() ? sync_failure : hours.failure();
  return Status::FailedPrecondition(
      "store " + options.dir +
      " failed to sync earlier; reopen it to recover: " + failure.message());
}

Result<HourAppender*> DelayLogStore::Impl::AppenderFor(int64_t epoch_hour) {
  bool created = false;
  Result<HourAppender*> appender = hours.AppenderFor(epoch_hour, &created);
  if (created) dir_dirty = true;
  return appender;
}

Result<std::unique_ptr<DelayLogStore>> DelayLogStore::Open(const StoreOptions& options,
                                                           RecoveryReport* report) {
  if (options.dir.empty()) return Status::InvalidArgument("store directory is empty");
  Status s = CreateDirIfMissing(options.dir);
  if (!s.ok()) return s;
  std::unique_ptr<DelayLogStore> store(new DelayLogStore());
  store->impl_ = std::make_unique<Impl>(options);
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
  Status s = impl_->Usable();
  if (s.ok()) s = Sync();
  if (s.ok()) {
    s = impl_->hours.CloseAll();
  } else {
    impl_->hours.Abandon();
  }
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
  if (!impl_->hours.Contains(hour)) return Status::Ok();
  if (HourAppender* open = impl_->hours.OpenAppender(hour)) {
    // Unsynced appends become visible to pread once written to the page cache.
    HourAppender& appender = *open;
    Status s = appender.Flush();
    if (!s.ok()) return s;
    const HeadCell& cell = appender.cells()[SecondInHour(epoch_second)];
    return ReadSecondChain(appender.index_file(), appender.data_file(), epoch_second, cell,
                           appender.state().entries, out);
  }
  Result<const HeadCells*> cells = impl_->hours.CellsOf(hour);
  if (!cells.ok()) return cells.status();
  const HeadCell& cell = (**cells)[SecondInHour(epoch_second)];
  if (cell.count == 0) return Status::Ok();
  HourPaths paths = PathsOfHour(impl_->options.dir, hour);
  Result<PosixFile> index = PosixFile::Open(paths.index, PosixFile::Mode::kReadOnly);
  if (!index.ok()) return index.status();
  Result<PosixFile> data = PosixFile::Open(paths.data, PosixFile::Mode::kReadOnly);
  if (!data.ok()) return data.status();
  return ReadSecondChain(*index, *data, epoch_second, cell, impl_->hours.EntriesOf(hour), out);
}

Result<std::optional<FoundRecord>> DelayLogStore::FindInHour(int64_t epoch_hour,
                                                             const ArrivalOrder& order) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  if (!impl_->hours.Contains(epoch_hour)) return std::optional<FoundRecord>();
  if (HourAppender* open = impl_->hours.OpenAppender(epoch_hour)) {
    // Unsynced appends become visible to pread once written to the page cache.
    HourAppender& appender = *open;
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
  return SearchArrivalOrder(*index, *data, impl_->hours.EntriesOf(epoch_hour), order);
}

Result<uint32_t> DelayLogStore::CountInSecond(int64_t epoch_second) {
  int64_t hour = HourOfSecond(epoch_second);
  if (!impl_->hours.Contains(hour)) return uint32_t{0};
  Result<const HeadCells*> cells = impl_->hours.CellsOf(hour);
  if (!cells.ok()) return cells.status();
  return (**cells)[SecondInHour(epoch_second)].count;
}

Result<uint64_t> DelayLogStore::CountFromSecond(int64_t from_second) {
  if (Status usable = impl_->Usable(); !usable.ok()) return usable;
  const int64_t first_hour = HourOfSecond(from_second);
  uint64_t count = 0;
  for (int64_t hour : impl_->hours.Hours()) {
    if (hour < first_hour) continue;
    if (hour != first_hour) {
      count += impl_->hours.EntriesOf(hour);
      continue;
    }
    Result<const HeadCells*> cells = impl_->hours.CellsOf(first_hour);
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
  for (std::optional<int64_t> hour = impl_->hours.FirstHourFrom(HourOfSecond(from_second));
       hour && *hour * kSecondsPerHour < limit_second;
       hour = impl_->hours.FirstHourFrom(*hour + 1)) {
    Result<const HeadCells*> cells = impl_->hours.CellsOf(*hour);
    if (!cells.ok()) return cells.status();
    int64_t hour_start = *hour * kSecondsPerHour;
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
  for (int64_t hour : impl_->hours.Hours()) {
    if ((hour + 1) * kMsPerHour > deliver_before_ms) break;
    doomed.push_back(hour);
  }
  for (int64_t hour : doomed) {
    Status s = impl_->hours.Remove(hour);
    if (!s.ok()) return s.WithContext("delete hour " + HourName(hour));
  }
  return doomed.empty() ? Status::Ok() : SyncDir(impl_->options.dir);
}

std::vector<int64_t> DelayLogStore::Hours() const { return impl_->hours.Hours(); }

const std::string& DelayLogStore::dir() const { return impl_->options.dir; }

}  // namespace delaybridge::storage
