#include "plugin/partition_store.h"

#include <algorithm>
#include <cassert>
#include <filesystem>

#include "plugin/store_identity.h"
#include "storage/delivery_checkpoint.h"

namespace delaybridge::plugin {

namespace {
constexpr int64_t kMsPerHour = 3'600'000;
constexpr int64_t kRecommitMs = 5'000;  // an unchanged state is committed again this often
}  // namespace

namespace {

// Empties a store directory. Returns whether there was one to empty.
Result<bool> EmptyStoreDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return false;
  std::filesystem::remove_all(dir, ec);
  if (ec) return Status::IOError("empty " + dir + ": " + ec.message());
  return true;
}

// What the local store directory holds against the group's last commit; another history is
// emptied.
enum class LocalHistory {
  kNone,          // no store directory, or no commit to match
  kCommitted,     // the store that made the commit
  kTakenOver,     // the store rebuilt from the commit: nobody has committed since the takeover
  kOlderEmptied,  // another history of the partition: emptied
};

Result<LocalHistory> MatchOrEmptyLocalStore(const std::string& dir,
                                            const ProgressMetadata& committed, bool exactly_once) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return LocalHistory::kNone;
  auto local_id = ReadOrCreateStoreId(dir);
  if (!local_id.ok()) return local_id.status();
  if (*local_id == committed.store_id) return LocalHistory::kCommitted;
  if (!exactly_once && ReadTakeover(dir) == EncodeProgressMetadata(committed)) {
    return LocalHistory::kTakenOver;
  }
  auto emptied = EmptyStoreDir(dir);
  if (!emptied.ok()) return emptied.status();
  return LocalHistory::kOlderEmptied;
}

}  // namespace

Result<std::unique_ptr<PartitionStore>> PartitionStore::Open(
    const TopicPartitionId& id, const std::string& storage_dir,
    const storage::StoreOptions& options, int64_t now_ms,
    const std::optional<ProgressMetadata>& kafka_state, storage::RecoveryReport* report,
    bool exactly_once) {
  storage::StoreOptions opts = options;
  opts.dir = (std::filesystem::path(storage_dir) / id.ToString()).string();
  LocalHistory history = LocalHistory::kNone;
  if (kafka_state) {
    auto matched = MatchOrEmptyLocalStore(opts.dir, *kafka_state, exactly_once);
    if (!matched.ok()) return matched.status();
    history = *matched;
  }
  bool rebuilt = history == LocalHistory::kOlderEmptied;
  if (exactly_once && !rebuilt && std::filesystem::exists(opts.dir)) {
    auto clean = TakeClosedCleanly(opts.dir);
    if (!clean.ok()) return clean.status();
    if (!*clean) {
      // After a crash: records appended past the marker would be read and stored again.
      auto emptied = EmptyStoreDir(opts.dir);
      if (!emptied.ok()) return emptied.status();
      rebuilt = kafka_state.has_value();
    }
  }
  auto log = storage::DelayLogStore::Open(opts, report);
  if (!log.ok()) return log.status().WithContext("open store " + opts.dir);
  auto checkpoint = storage::ReadDeliveryCheckpoint(opts.dir);
  std::string damaged_checkpoint;
  if (!checkpoint.ok() && checkpoint.status().code() == Status::Code::kCorruption) {
    // Only a hint of what was delivered: without it the store starts at its first hour (or at
    // Kafka's checkpoint), which delivers some records again and loses none.
    damaged_checkpoint = checkpoint.status().ToString();
    checkpoint = std::optional<storage::DeliveryCheckpoint>();
  }
  if (!checkpoint.ok()) return checkpoint.status().WithContext("read checkpoint in " + opts.dir);

  auto marker = SourceOffsetMarker::Open(opts.dir);
  if (!marker.ok()) return marker.status();
  auto store_id = ReadOrCreateStoreId(opts.dir);
  if (!store_id.ok()) return store_id.status();
  // A new store for a partition Kafka has progress for: everything is read again.
  rebuilt = rebuilt || (kafka_state && kafka_state->store_id != *store_id &&
                        history != LocalHistory::kTakenOver);
  if (rebuilt && !exactly_once) {
    if (Status s = RecordTakeover(opts.dir, EncodeProgressMetadata(*kafka_state)); !s.ok()) {
      return s;
    }
  }

  // exactly_once: records asking for a time after Kafka's checkpoint were not delivered, so the
  // store must take them (not deliver them at once as behind it) while it re-reads them.
  RecordPosition start{exactly_once && kafka_state ? kafka_state->checkpoint_ms : now_ms, 0};
  bool had_checkpoint = false;
  int64_t checkpoint_written_ms = 0;
  if (checkpoint->has_value()) {
    checkpoint_written_ms = (*checkpoint)->updated_at_ms;
    start = RecordPosition{(*checkpoint)->next_deliver_at_ms, (*checkpoint)->next_ordinal};
    had_checkpoint = true;
  } else if (const auto hours = (*log)->Hours(); !hours.empty()) {
    // Records but no checkpoint (a crash before the first write): nothing was delivered.
    start = RecordPosition{hours.front() * kMsPerHour, 0};
  }
  // Kafka's checkpoint can be ahead of the local file (written less often, or by a previous
  // owner): records before it were delivered.
  if (kafka_state) start = std::max(start, RecordPosition{kafka_state->checkpoint_ms, 0});
  auto store = std::unique_ptr<PartitionStore>(new PartitionStore(
      id, std::move(log).value(), std::move(marker).value(), start, had_checkpoint,
      checkpoint_written_ms, std::move(store_id).value(), rebuilt, exactly_once));
  store->damaged_checkpoint_ = std::move(damaged_checkpoint);
  store->reused_after_takeover_ = history == LocalHistory::kTakenOver;
  return store;
}

PartitionStore::PartitionStore(TopicPartitionId id, std::unique_ptr<storage::DelayLogStore> log,
                               SourceOffsetMarker marker, RecordPosition start, bool had_checkpoint,
                               int64_t checkpoint_written_ms, std::string store_id, bool rebuilt,
                               bool exactly_once)
    : id_(std::move(id)),
      exactly_once_(exactly_once),
      store_id_(std::move(store_id)),
      rebuilt_(rebuilt),
      checkpoint_written_ms_(checkpoint_written_ms),
      log_(std::move(log)),
      marker_(std::move(marker)),
      stored_below_(marker_.recovered()),
      start_(start),
      had_checkpoint_(had_checkpoint),
      tracker_(start),
      preloaded_until_second_(start.deliver_at_ms / 1000),
      last_persisted_(start) {}

std::optional<int64_t> PartitionStore::Resume(std::optional<int64_t> committed_offset,
                                              const std::optional<ProgressMetadata>& kafka_state,
                                              int64_t now_ms, int64_t late_slack_ms) {
  resumed_at_ms_ = now_ms;
  const std::vector<int64_t> hours = log_->Hours();
  // Records recovered from this store, whose offsets are unknown: they hold the low watermark
  // at the committed one until the checkpoint passes the end of the store's last hour, and
  // late_below until it passes the latest time a late one can have been placed at: when it was
  // stored (before now, or before the last checkpoint write if the clock stepped back since)
  // plus how far the watermark can run ahead of the clock, plus a second of slack.
  const int64_t recovered_until_ms = hours.empty() ? 0 : (hours.back() + 1) * kMsPerHour;
  const int64_t late_until_ms =
      std::max({now_ms, start_.deliver_at_ms, checkpoint_written_ms_}) + late_slack_ms + 1000;
  std::optional<int64_t> start_offset;
  if (kafka_state && committed_offset) {
    start_offset = *committed_offset;
    if (!rebuilt_ && stored_below_) start_offset = std::max(*start_offset, *stored_below_);
    if (*start_offset < kafka_state->ingest_position) finished_ = kafka_state;
    stored_below_.reset();  // reading starts past what the store holds
    if (!hours.empty()) {
      // A taken-over store placed records late that were on time in the previous owner's
      // store, below that owner's LL: only the committed offset bounds its late ones.
      const int64_t min_late_offset =
          reused_after_takeover_ ? *committed_offset : kafka_state->late_below;
      progress_.AddRecovered(recovered_until_ms, *committed_offset, late_until_ms, min_late_offset);
    }
  } else {
    if (!committed_offset || !stored_below_ || *stored_below_ <= *committed_offset) {
      stored_below_.reset();
    }
    start_offset = committed_offset;
    // Offsets of an older store (or an older bridge) are not known: nothing below them can
    // be declared finished until its records are delivered.
    if (!hours.empty()) progress_.AddRecovered(recovered_until_ms, 0, late_until_ms, 0);
  }
  if (start_offset) progress_.StartAt(*start_offset);
  return start_offset;
}

bool PartitionStore::Finished(int64_t offset, int64_t requested_ms) {
  return finished_ && finished_->Finished(offset, requested_ms);
}

std::optional<PartitionStore::RebuildDone> PartitionStore::EndRebuildWhenCaughtUp(int64_t now_ms) {
  // Past what the previous owner read: nothing more to skip, and this store's progress
  // describes everything below its ingest position.
  if (!finished_ || progress_.ingest_position() < finished_->ingest_position) return std::nullopt;
  const RebuildDone done{finished_->ingest_position, now_ms - resumed_at_ms_};
  finished_.reset();
  return done;
}

std::optional<CommittedOffset> PartitionStore::TakeProgressToCommit(int64_t now_ms, bool force) {
  // While records the previous commit describes are being read again, that commit stays the
  // truth: one from here could not say which of the records not yet re-read were finished.
  if (!progress_.has_position() || finished_) return std::nullopt;
  const RecordPosition watermark = tracker_.Watermark(preloaded_until_second_ * 1000, now_ms);
  const PartitionProgress::Snapshot snapshot = progress_.Take(watermark);
  // An idle partition's checkpoint follows the clock; committing it would only rewrite the
  // same state, so a moved checkpoint alone counts when it covers new deliveries. The state is
  // committed again every kRecommitMs anyway: an asynchronous commit can fail.
  if (!force && Unchanged(snapshot, now_ms)) return std::nullopt;
  return RecordCommit(snapshot, watermark, snapshot.late_below, now_ms);
}

bool PartitionStore::Unchanged(const PartitionProgress::Snapshot& snapshot, int64_t now_ms) const {
  return last_snapshot_ && last_snapshot_->low_watermark == snapshot.low_watermark &&
         last_snapshot_->late_below == snapshot.late_below &&
         last_snapshot_->ingest_position == snapshot.ingest_position &&
         acknowledged_count_ == acknowledged_count_at_commit_ &&
         now_ms - last_commit_ms_ < kRecommitMs;
}

std::optional<CommittedOffset> PartitionStore::RecordCommit(
    const PartitionProgress::Snapshot& snapshot, RecordPosition watermark, int64_t late_below,
    int64_t now_ms) {
  last_commit_ms_ = now_ms;
  const ProgressMetadata metadata{store_id_, watermark.deliver_at_ms, late_below,
                                  snapshot.ingest_position};
  last_commit_ = CommittedOffset{snapshot.low_watermark, EncodeProgressMetadata(metadata)};
  last_snapshot_ = snapshot;
  acknowledged_count_at_commit_ = acknowledged_count_;
  return last_commit_;
}

std::optional<RecordPosition> PartitionStore::TransactionCheckpoint(
    int64_t cut_ms, int64_t now_ms, std::optional<RecordPosition> last_produced) {
  // Everything before the tracker's watermark is delivered; the cut bounds what was produced.
  const RecordPosition delivered = tracker_.Peek(preloaded_until_second_ * 1000, now_ms);
  const RecordPosition checkpoint = std::max(RecordPosition{tracker_.floor_ms(), 0},
                                             std::min(delivered, RecordPosition{cut_ms + 1, 0}));
  // A checkpoint inside a millisecond could not be told apart by a rebuild, which knows the
  // time a record asked for but not the order it was stored in.
  if (checkpoint.ordinal != 0) return std::nullopt;
  if (last_produced && !(*last_produced < checkpoint)) return std::nullopt;
  // Records delivered at once (behind the checkpoint) and dead letters are finished only when
  // acknowledged; the metadata says every such record below the ingest position is.
  if (progress_.unacknowledged_dead_letters() > 0) return std::nullopt;
  return checkpoint;
}

std::optional<CommittedOffset> PartitionStore::TransactionProgress(RecordPosition checkpoint,
                                                                   int64_t now_ms, bool force) {
  if (!progress_.has_position() || finished_) return std::nullopt;
  const PartitionProgress::Snapshot snapshot = progress_.Take(checkpoint);
  // Exact at a transaction's cut: every late or rejected record below the ingest position is
  // finished, so late_below is the ingest position.
  if (!force && Unchanged(snapshot, now_ms)) return std::nullopt;
  return RecordCommit(snapshot, checkpoint, snapshot.ingest_position, now_ms);
}

Status PartitionStore::MarkClosedCleanly() {
  // The mark vouches for the marker: it must not survive a power loss the marker did not.
  if (Status s = marker_.Sync(); !s.ok()) return s;
  return plugin::MarkClosedCleanly(log_->dir());
}

bool PartitionStore::Acknowledge(RecordPosition position) {
  if (!tracker_.Acknowledge(position)) return false;
  ++acknowledged_count_;
  return true;
}

Result<std::optional<RecordPosition>> PartitionStore::Append(const EncodedRecord& record,
                                                             int64_t now_ms) {
  // exactly_once: at the time asked for (Behind records never get here), so a rebuild knows
  // from the record alone whether a checkpoint covers it.
  const int64_t deliver_at_ms =
      exactly_once_ ? record.requested_deliver_at_ms()
                    : std::max({record.requested_deliver_at_ms(), now_ms, tracker_.floor_ms()});
  auto appended = log_->Append(deliver_at_ms, record.bytes());
  if (!appended.ok()) return appended.status();
  const RecordPosition position{deliver_at_ms, appended->ordinal};
  assert(!(position < tracker_.floor()) && "appended before the delivered watermark");
  offsets_.AddStored(record.source_offset(), appended->sequence);
  // Placed later than asked: a rebuild could not tell where, so it holds late_below back.
  progress_.AddStored(record.source_offset(), deliver_at_ms,
                      deliver_at_ms != record.requested_deliver_at_ms());
  if (appended->second >= preloaded_until_second_) return std::optional<RecordPosition>();
  // The preloader has passed this second: the record goes to the wheel directly, and the
  // tracker must hold it from now on so no checkpoint can claim it delivered.
  tracker_.Add(position);
  return std::optional<RecordPosition>(position);
}

namespace {

// The arrival order of the bridge's payloads is their source offset (a partition is read in
// order), a cancel's being its own offset.
storage::ArrivalOrder BySourceOffset(int64_t sought) {
  return [sought](std::string_view payload) {
    const std::optional<int64_t> offset = ArrivalOffsetOf(payload);
    if (!offset) return 1;
    return sought < *offset ? -1 : (sought > *offset ? 1 : 0);
  };
}

}  // namespace

Result<std::vector<int64_t>> PartitionStore::FindInHour(int64_t epoch_hour, int64_t offset,
                                                        std::vector<std::string>* damage) {
  auto found = log_->FindInHour(epoch_hour, BySourceOffset(offset));
  if (found.ok()) {
    // A cancel's own offset holds no record to cancel.
    if (!found->has_value() ||
        KindOfStoredPayload((*found)->payload) != StoredPayloadKind::kDelayedRecord) {
      return std::vector<int64_t>();
    }
    return std::vector<int64_t>{(*found)->deliver_at_ms};
  }
  if (found.status().code() != Status::Code::kCorruption) return found.status();
  // Damage on the search path: every intact chain of the hour is still readable.
  damage->push_back(found.status().ToString());
  std::vector<int64_t> placed_at_ms;
  const int64_t hour_end_second = (epoch_hour + 1) * kMsPerHour / 1000;
  for (int64_t second = epoch_hour * kMsPerHour / 1000; second < hour_end_second; ++second) {
    auto next = log_->NextNonEmptySecond(second, hour_end_second);
    if (!next.ok()) return next.status();
    if (!next->has_value()) break;
    second = **next;
    std::vector<storage::StoredRecord> records;
    Status read = log_->ReadSecond(second, &records);
    if (!read.ok() && read.code() != Status::Code::kCorruption) return read;
    for (const auto& stored : records) {
      if (KindOfStoredPayload(stored.payload) == StoredPayloadKind::kDelayedRecord &&
          PeekSourceOffset(stored.payload) == offset) {
        placed_at_ms.push_back(stored.deliver_at_ms);
      }
    }
  }
  return placed_at_ms;
}

Result<PartitionStore::CancelResult> PartitionStore::ApplyCancel(const StoredCancel& cancel) {
  CancelResult result;
  // Every copy of the target at or after the watermark (a crash can leave a record stored twice).
  std::vector<int64_t> pending_at_ms;
  bool behind_watermark = false;
  for (const int64_t hour : log_->Hours()) {
    if (hour < tracker_.floor_ms() / kMsPerHour) continue;
    auto found = FindInHour(hour, cancel.target_offset, &result.damage);
    if (!found.ok()) return found.status().WithContext("find " + cancel.TargetId());
    for (const int64_t deliver_at_ms : *found) {
      if (deliver_at_ms < tracker_.floor_ms()) {
        behind_watermark = true;
      } else {
        pending_at_ms.push_back(deliver_at_ms);
      }
    }
  }
  const std::string encoded = EncodeStoredCancel(cancel);
  result.verdict = behind_watermark ? CancelVerdict::kTooLate : CancelVerdict::kUnknown;
  uint64_t last_sequence = 0;
  for (const int64_t deliver_at_ms : pending_at_ms) {
    auto appended = log_->Append(deliver_at_ms, encoded);
    if (!appended.ok()) return appended.status().WithContext("append " + cancel.SourceId());
    assert(!(RecordPosition{deliver_at_ms, appended->ordinal} < tracker_.floor()) &&
           "a cancel appended before the delivered watermark");
    last_sequence = appended->sequence;
    if (appended->second >= preloaded_until_second_) {
      result.verdict = CancelVerdict::kCancelled;
    } else {
      result.loaded_at_ms = deliver_at_ms;
      result.verdict = std::max(result.verdict, CancelVerdict::kInMemory);
    }
  }
  if (pending_at_ms.empty()) {
    offsets_.AddSettled(cancel.cancel_offset);
    progress_.AddFinished(cancel.cancel_offset);
  } else {
    // Pending like its target until the watermark passes it, so a rebuild reads it again.
    offsets_.AddStored(cancel.cancel_offset, last_sequence);
    progress_.AddStored(cancel.cancel_offset,
                        *std::max_element(pending_at_ms.begin(), pending_at_ms.end()), false);
  }
  return result;
}

Status PartitionStore::Sync() {
  if (needs_sync()) {
    if (Status s = log_->Sync(); !s.ok()) return s.WithContext("sync store " + log_->dir());
  }
  offsets_.MarkDurable(log_->durable_sequence());
  return Status::Ok();
}

Result<std::unique_ptr<storage::PendingSync>> PartitionStore::BeginSync() {
  auto sync = log_->BeginSync();
  if (!sync.ok()) return sync.status().WithContext("sync store " + log_->dir());
  return sync;
}

Status PartitionStore::FinishSync(std::unique_ptr<storage::PendingSync> sync,
                                  const Status& run_status) {
  if (Status s = log_->FinishSync(std::move(sync), run_status); !s.ok()) {
    return s.WithContext("sync store " + log_->dir());
  }
  offsets_.MarkDurable(log_->durable_sequence());
  return Status::Ok();
}

Status PartitionStore::PersistCheckpoint(int64_t now_ms) {
  const std::optional<storage::DeliveryCheckpoint> cp = TakeCheckpoint(now_ms);
  if (!cp) return Status::Ok();
  return CheckpointWritten(*cp, storage::WriteDeliveryCheckpoint(log_->dir(), *cp));
}

std::optional<storage::DeliveryCheckpoint> PartitionStore::TakeCheckpointDue(int64_t now_ms) {
  const bool nothing_acknowledged_since = acknowledged_count_ == acknowledged_count_at_persisted_;
  if (nothing_acknowledged_since && now_ms - last_persisted_at_ms_ < kClockOnlyCheckpointMs) {
    return std::nullopt;
  }
  return TakeCheckpoint(now_ms);
}

std::optional<storage::DeliveryCheckpoint> PartitionStore::TakeCheckpoint(int64_t now_ms) {
  if (checkpoint_in_flight_) return std::nullopt;
  const RecordPosition watermark = CurrentWatermark(now_ms);
  if (watermark == last_persisted_) return std::nullopt;
  checkpoint_in_flight_ = true;
  acknowledged_count_at_in_flight_ = acknowledged_count_;
  return storage::DeliveryCheckpoint{watermark.deliver_at_ms, watermark.ordinal, now_ms};
}

RecordPosition PartitionStore::CurrentWatermark(int64_t now_ms) {
  if (exactly_once_) return tracker_.floor();
  return tracker_.Watermark(preloaded_until_second_ * 1000, now_ms);
}

Status PartitionStore::CheckpointWritten(const storage::DeliveryCheckpoint& cp,
                                         const Status& write_status) {
  checkpoint_in_flight_ = false;
  if (!write_status.ok()) return write_status.WithContext("write checkpoint in " + log_->dir());
  last_persisted_ = RecordPosition{cp.next_deliver_at_ms, cp.next_ordinal};
  last_persisted_at_ms_ = cp.updated_at_ms;
  acknowledged_count_at_persisted_ = acknowledged_count_at_in_flight_;
  // Retention only after the checkpoint that covers the hours is durable.
  const int64_t watermark_hour = cp.next_deliver_at_ms / kMsPerHour;
  if (watermark_hour > deleted_before_hour_) {
    if (Status s = log_->DeleteHoursBefore(watermark_hour * kMsPerHour); !s.ok()) {
      return s.WithContext("delete delivered hours in " + log_->dir());
    }
    deleted_before_hour_ = watermark_hour;
  }
  return Status::Ok();
}

}  // namespace delaybridge::plugin
