#include "plugin/partition_store.h"

#include <algorithm>
#include <filesystem>

#include "storage/delivery_checkpoint.h"

namespace delaybridge::plugin {

namespace {
constexpr int64_t kMsPerHour = 3'600'000;
}

Result<std::unique_ptr<PartitionStore>> PartitionStore::Open(const TopicPartitionId& id,
                                                             const std::string& storage_dir,
                                                             const storage::StoreOptions& options,
                                                             int64_t now_ms,
                                                             storage::RecoveryReport* report) {
  storage::StoreOptions opts = options;
  opts.dir = (std::filesystem::path(storage_dir) / id.ToString()).string();
  auto log = storage::DelayLogStore::Open(opts, report);
  if (!log.ok()) return log.status().WithContext("open store " + opts.dir);
  auto checkpoint = storage::ReadDeliveryCheckpoint(opts.dir);
  if (!checkpoint.ok()) return checkpoint.status().WithContext("read checkpoint in " + opts.dir);

  auto marker = SourceOffsetMarker::Open(opts.dir);
  if (!marker.ok()) return marker.status();

  RecordPosition start{now_ms, 0};
  bool had_checkpoint = false;
  if (checkpoint->has_value()) {
    start = RecordPosition{(*checkpoint)->next_deliver_at_ms, (*checkpoint)->next_ordinal};
    had_checkpoint = true;
  } else if (const auto hours = (*log)->Hours(); !hours.empty()) {
    // Records but no checkpoint (a crash before the first write): nothing was delivered.
    start = RecordPosition{hours.front() * kMsPerHour, 0};
  }
  return std::unique_ptr<PartitionStore>(new PartitionStore(
      id, std::move(log).value(), std::move(marker).value(), start, had_checkpoint));
}

PartitionStore::PartitionStore(TopicPartitionId id, std::unique_ptr<storage::DelayLogStore> log,
                               SourceOffsetMarker marker, RecordPosition start, bool had_checkpoint)
    : id_(std::move(id)),
      log_(std::move(log)),
      marker_(std::move(marker)),
      stored_below_(marker_.recovered()),
      start_(start),
      had_checkpoint_(had_checkpoint),
      tracker_(start),
      preloaded_until_second_(start.deliver_at_ms / 1000),
      last_persisted_(start) {}

void PartitionStore::ResumeFrom(std::optional<int64_t> committed_offset) {
  if (!committed_offset || !stored_below_ || *stored_below_ <= *committed_offset) {
    stored_below_.reset();
  }
}

Result<std::optional<RecordPosition>> PartitionStore::Append(const DelayedRecord& record,
                                                             const std::string& encoded,
                                                             int64_t now_ms) {
  const int64_t deliver_at_ms =
      std::max({record.requested_deliver_at_ms, now_ms, tracker_.floor_ms()});
  auto appended = log_->Append(deliver_at_ms, encoded);
  if (!appended.ok()) return appended.status();
  offsets_.AddStored(record.source_offset, appended->sequence);
  if (appended->second >= preloaded_until_second_) return std::optional<RecordPosition>();
  // The preloader has passed this second: the record goes to the wheel directly, and the
  // tracker must hold it from now on so no checkpoint can claim it delivered.
  const RecordPosition position{deliver_at_ms, appended->ordinal};
  tracker_.Add(position);
  return std::optional<RecordPosition>(position);
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
  const std::optional<storage::DeliveryCheckpoint> cp = TakeCheckpointDue(now_ms);
  if (!cp) return Status::Ok();
  return CheckpointWritten(*cp, storage::WriteDeliveryCheckpoint(log_->dir(), *cp));
}

std::optional<storage::DeliveryCheckpoint> PartitionStore::TakeCheckpointDue(int64_t now_ms) {
  if (checkpoint_in_flight_) return std::nullopt;
  const RecordPosition watermark = tracker_.Watermark(preloaded_until_second_ * 1000, now_ms);
  if (watermark == last_persisted_) return std::nullopt;
  checkpoint_in_flight_ = true;
  return storage::DeliveryCheckpoint{watermark.deliver_at_ms, watermark.ordinal, now_ms};
}

Status PartitionStore::CheckpointWritten(const storage::DeliveryCheckpoint& cp,
                                         const Status& write_status) {
  checkpoint_in_flight_ = false;
  if (!write_status.ok()) return write_status.WithContext("write checkpoint in " + log_->dir());
  last_persisted_ = RecordPosition{cp.next_deliver_at_ms, cp.next_ordinal};
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
