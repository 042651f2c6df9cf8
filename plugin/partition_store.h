// PartitionStore: everything the bridge keeps for one assigned delay-topic partition: its
// DelayLogStore in <storage.dir>/<topic>-<partition>/ with the delivery checkpoint beside it,
// the delivered watermark (DeliveryTracker), the committable source offsets (SourceOffsets),
// and how far the preloader has walked (preloaded_until_second). One directory per partition
// means a partition can move to another bridge instance by moving its directory.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "plugin/delayed_record.h"
#include "plugin/delivery_tracker.h"
#include "plugin/source_consumer.h"
#include "plugin/source_offset_marker.h"
#include "plugin/source_offsets.h"
#include "storage/delay_log_store.h"
#include "storage/delivery_checkpoint.h"

namespace delaybridge::plugin {

class PartitionStore {
 public:
  // Opens (recovering) the store and reads its checkpoint. now_ms seeds the watermark of a
  // store that has neither records nor a checkpoint.
  static Result<std::unique_ptr<PartitionStore>> Open(const TopicPartitionId& id,
                                                      const std::string& storage_dir,
                                                      const storage::StoreOptions& options,
                                                      int64_t now_ms,
                                                      storage::RecoveryReport* report);

  const TopicPartitionId& id() const { return id_; }
  storage::DelayLogStore& log() { return *log_; }
  DeliveryTracker& tracker() { return tracker_; }
  SourceOffsets& offsets() { return offsets_; }
  // The checkpoint read at open: records ordered before it were delivered before.
  RecordPosition start() const { return start_; }
  bool had_checkpoint() const { return had_checkpoint_; }

  // Every second before this one has been loaded into memory (or was empty).
  int64_t preloaded_until_second() const { return preloaded_until_second_; }
  void set_preloaded_until_second(int64_t second) { preloaded_until_second_ = second; }

  // Appends an accepted record at max(requested, now, watermark floor), so it always sorts
  // after the delivered watermark. Returns the record's position when it lands inside the
  // preloaded horizon: it has joined the tracker, and the caller hands it to the wheel now,
  // before it is durable (docs/bridge.md, "Guarantees": a crash can then cost a duplicate,
  // never a loss, because its source offset is committed only once it is durable). nullopt:
  // the preloader loads it when its second comes near.
  Result<std::optional<RecordPosition>> Append(const DelayedRecord& record,
                                               const std::string& encoded, int64_t now_ms);

  // Group commit: Sync() when anything was appended since the last one, then settles the
  // covered source offsets.
  Status Sync();
  // The same in steps, so the fdatasyncs run on another thread (DiskWorker) while ingest goes
  // on: BeginSync (owner thread), PendingSync::Run (any thread), then FinishSync (owner
  // thread) with Run()'s status, which settles the source offsets the sync covered.
  bool needs_sync() const { return log_->last_sequence() != log_->durable_sequence(); }
  Result<std::unique_ptr<storage::PendingSync>> BeginSync();
  Status FinishSync(std::unique_ptr<storage::PendingSync> sync, const Status& run_status);

  // Source records below this offset were already stored (or dead-lettered) before a restart:
  // a re-consumed one is skipped instead of being stored twice. See SourceOffsetMarker.
  std::optional<int64_t> stored_below() const { return stored_below_; }
  // The marker is trusted only when the group resumes from a committed offset below it: with
  // no commit (a new group, or the topic was deleted and re-created) offsets start over and
  // an old marker would skip new records.
  void ResumeFrom(std::optional<int64_t> committed_offset);
  // Records the offset about to be committed (before the commit itself is sent).
  Status MarkCommittable(int64_t next_offset) { return marker_.Write(next_offset); }

  // Persists the watermark when it moved and deletes hour files wholly before it.
  Status PersistCheckpoint(int64_t now_ms);
  // The same in steps, so the file write can run on another thread (DiskWorker): the
  // checkpoint to write, or nullopt when the watermark has not moved or a write is in flight;
  // then, on the owner thread, what the write returned (ok: it becomes last_persisted() and
  // hour files wholly before it are deleted). WriteDeliveryCheckpoint touches only the
  // CHECKPOINT files, so the store can be used meanwhile.
  std::optional<storage::DeliveryCheckpoint> TakeCheckpointDue(int64_t now_ms);
  Status CheckpointWritten(const storage::DeliveryCheckpoint& cp, const Status& write_status);
  RecordPosition last_persisted() const { return last_persisted_; }

 private:
  PartitionStore(TopicPartitionId id, std::unique_ptr<storage::DelayLogStore> log,
                 SourceOffsetMarker marker, RecordPosition start, bool had_checkpoint);

  TopicPartitionId id_;
  std::unique_ptr<storage::DelayLogStore> log_;
  SourceOffsetMarker marker_;
  std::optional<int64_t> stored_below_;
  RecordPosition start_;
  bool had_checkpoint_;
  DeliveryTracker tracker_;
  SourceOffsets offsets_;
  int64_t preloaded_until_second_;
  RecordPosition last_persisted_;
  bool checkpoint_in_flight_ = false;
  int64_t deleted_before_hour_ = 0;  // hour files before this hour were deleted
};

}  // namespace delaybridge::plugin
