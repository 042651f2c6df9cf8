// PartitionStore: everything the bridge keeps for one assigned delay-topic partition: its
// DelayLogStore in <storage.dir>/<topic>-<partition>/ with the delivery checkpoint beside it,
// the delivered watermark (DeliveryTracker), the source offsets the local store durably holds
// (SourceOffsets, for the local marker), the progress Kafka holds (PartitionProgress, committed
// with ProgressMetadata), and how far the preloader has walked (preloaded_until_second).
//
// The local store is a cache of the delay topic: it is reused when the group's last commit came
// from it (same store id) or is the one it was rebuilt from (nobody committed since), and
// otherwise emptied and rebuilt by reading the delay topic again from the committed low
// watermark, skipping what the previous owner finished.
//
// With exactly_once (docs/bridge.md, "Exactly once") a record is placed at exactly the time it
// asks for, or, when that is before the committed checkpoint, delivered at once without being
// stored (Behind); the delivered watermark moves only when a transaction commits it; and a store
// is reused only after a clean close.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "plugin/delayed_record.h"
#include "plugin/delivery_tracker.h"
#include "plugin/encoded_record.h"
#include "plugin/partition_progress.h"
#include "plugin/progress_metadata.h"
#include "plugin/source_offset_marker.h"
#include "plugin/source_offsets.h"
#include "plugin/stored_cancel.h"
#include "plugin/topic_partition.h"
#include "storage/delay_log_store.h"
#include "storage/delivery_checkpoint.h"

namespace delaybridge::plugin {

class PartitionStore {
 public:
  // Opens (recovering) the store and reads its checkpoint. now_ms seeds the watermark of a
  // store that has neither records nor a checkpoint. kafka_state: the progress metadata of the
  // group's committed offset; when it names another store, the local one is emptied first
  // (rebuilt()) unless it was rebuilt from this very commit (reused_after_takeover()); with
  // exactly_once, also when it was not closed cleanly.
  static Result<std::unique_ptr<PartitionStore>> Open(
      const TopicPartitionId& id, const std::string& storage_dir,
      const storage::StoreOptions& options, int64_t now_ms,
      const std::optional<ProgressMetadata>& kafka_state, storage::RecoveryReport* report,
      bool exactly_once = false);

  const TopicPartitionId& id() const { return id_; }
  storage::DelayLogStore& log() { return *log_; }
  const std::string& dir() const { return log_->dir(); }
  DeliveryTracker& tracker() { return tracker_; }
  SourceOffsets& offsets() { return offsets_; }
  // The checkpoint read at open (or Kafka's, when later): records ordered before it were
  // delivered before.
  RecordPosition start() const { return start_; }
  // Not empty: the checkpoint file failed its checks and was ignored (why, for the log).
  const std::string& damaged_checkpoint() const { return damaged_checkpoint_; }
  bool had_checkpoint() const { return had_checkpoint_; }
  const std::string& store_id() const { return store_id_; }
  // The local store held another history of the partition and was emptied at open.
  bool rebuilt() const { return rebuilt_; }
  // The local store was rebuilt from the group's last commit, made by another store, before it
  // was opened this time: nobody has committed since, and it is reused (plugin/store_identity.h).
  bool reused_after_takeover() const { return reused_after_takeover_; }

  // Deliveries of this partition wait until reading has reached `offset` (its end when it was
  // assigned): a cancel follows its target in the partition, so a cancel produced before a
  // restart, a failover or a backlog is read before the record it cancels can be loaded. While
  // they wait nothing of the store is loaded, and appends stay on disk.
  void HoldDeliveriesUntil(int64_t offset) { deliveries_held_until_ = offset; }
  void ReleaseDeliveries() { deliveries_held_until_.reset(); }
  const std::optional<int64_t>& deliveries_held_until() const { return deliveries_held_until_; }
  // Whether records may be loaded now: not held, and (exactly_once) not re-reading what the last
  // committed transaction describes.
  bool delivers() const { return !deliveries_held_until_ && !(exactly_once_ && catching_up()); }

  // Every second before this one has been loaded into memory (or was empty).
  int64_t preloaded_until_second() const { return preloaded_until_second_; }
  void set_preloaded_until_second(int64_t second) { preloaded_until_second_ = second; }
  // The second the preloader loads up to: lookahead_seconds past the clock, or past the
  // delivered watermark when that is later. The watermark is ahead of the clock after the clock
  // stepped back (it never moves back, and survives restarts in the checkpoint): records
  // arriving then are placed at it, and must still be loaded to be delivered at the times they
  // ask for.
  int64_t PreloadHorizonSecond(int64_t now_ms, int64_t lookahead_seconds) const {
    return std::max(now_ms, tracker_.floor_ms()) / 1000 + lookahead_seconds + 1;
  }

  // Appends an accepted record at max(requested, now, watermark floor), so it always sorts
  // after the delivered watermark. Returns the record's position when it lands inside the
  // preloaded horizon: it has joined the tracker, and the caller hands it to the wheel now,
  // before it is durable (docs/bridge.md, "Guarantees": a crash can then cost a duplicate,
  // never a loss, because its source offset is committed only once it is durable). nullopt:
  // the preloader loads it when its second comes near.
  Result<std::optional<RecordPosition>> Append(const EncodedRecord& record, int64_t now_ms);

  // A cancel (x-delay-cancel) of the record at cancel.target_offset. The target is looked up in
  // the store by its source offset (a binary search per hour from the delivered watermark's hour
  // on), and the cancel is appended to the second of every copy found at or after the watermark,
  // where the preloader, which reads seconds whole, drops the target. The cancel's own offset is
  // settled once those appends are durable (or at once when there are none), like a stored
  // record's, so a crash either keeps the cancel in the store or reads it again.
  enum class CancelVerdict {
    kUnknown,    // no record with that offset is in the store
    kTooLate,    // it is behind the delivered watermark: delivered already
    kInMemory,   // it is loaded (the delivery thread holds it, or has produced it): the caller
                 // asks the Deliverer to drop it, and learns from it whether it was too late
    kCancelled,  // it is in the store and not loaded yet: it will never be delivered
  };
  struct CancelResult {
    CancelVerdict verdict = CancelVerdict::kUnknown;
    // A copy is loaded (kInMemory, or a second copy of a record stored twice after a crash
    // beside a kCancelled one): the Deliverer must drop it too.
    std::optional<int64_t> loaded_at_ms;
    // Hours whose search met damage: searched second by second instead (for the log).
    std::vector<std::string> damage;
  };
  // An error: the store could not be read or appended to for now (nothing was settled; the cancel
  // may be applied again, and appending it twice is harmless).
  Result<CancelResult> ApplyCancel(const StoredCancel& cancel);

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
  // Decides where reading starts, given the group's committed offset and its progress metadata
  // (as passed to Open): nullopt leaves it to the committed offset or auto.offset.reset.
  //  - Kafka state from this store: at the local marker (what the store durably holds) or the
  //    committed low watermark, whichever is later.
  //  - Kafka state from another store (rebuilt()): at the low watermark.
  //  - An offset without our metadata: there, trusting the marker only below it.
  //  - No commit (a new group, or the topic was deleted and re-created): offsets start over and
  //    an old marker would skip new records, so it is ignored.
  // late_slack_ms: how far after the time it was stored a late record can have been placed
  // (the delivered watermark runs up to the preload horizon ahead of the clock).
  std::optional<int64_t> Resume(std::optional<int64_t> committed_offset,
                                const std::optional<ProgressMetadata>& kafka_state,
                                int64_t now_ms = 0, int64_t late_slack_ms = 0);
  struct RebuildDone {
    int64_t caught_up_offset = 0;  // the previous owner's ingest position
    int64_t elapsed_ms = 0;        // since Resume
  };
  // Ends the rebuild once reading has passed the previous owner's ingest position; returns what
  // it took when it ends now.
  std::optional<RebuildDone> EndRebuildWhenCaughtUp(int64_t now_ms);
  // Whether a record read again was finished by the partition's previous owner (or by this
  // store before a restart), per the committed progress; see ProgressMetadata::Finished.
  bool Finished(int64_t offset, int64_t requested_ms);
  PartitionProgress& progress() { return progress_; }
  // The broker acknowledged the delivery of the record at position (DeliveryTracker).
  bool Acknowledge(RecordPosition position);
  // The low watermark and metadata to commit when they changed since the last call (always,
  // with force); nullopt before anything was read, and while re-reading records the previous
  // commit describes (a rebuild), whose commit stays valid until then.
  std::optional<CommittedOffset> TakeProgressToCommit(int64_t now_ms, bool force);
  const std::optional<CommittedOffset>& last_commit() const { return last_commit_; }
  // Records the offset about to be committed (before the commit itself is sent).
  Status MarkCommittable(int64_t next_offset) { return marker_.Write(next_offset); }

  // ---- exactly_once ----
  bool exactly_once() const { return exactly_once_; }
  // A record asking for a time before the committed checkpoint cannot be stored (the checkpoint
  // says everything placed before it was delivered): it is delivered at once instead.
  bool Behind(int64_t requested_ms) const {
    return exactly_once_ && requested_ms < tracker_.floor_ms();
  }
  // Re-reading records the group's last commit describes (after a failover or a crash): none of
  // this partition's records is delivered meanwhile, so that commit stays exact until then.
  bool catching_up() const { return finished_.has_value(); }
  // Whether a record rejected now was dead-lettered by the previous owner (same configuration
  // assumed): it was read by it.
  bool FinishedRejected(int64_t offset) const {
    return exactly_once_ && finished_ && offset < finished_->ingest_position;
  }
  // The checkpoint a transaction cut at cut_ms can commit: every record placed before it is
  // delivered (or in the transaction) and none after it, given the latest position produced in
  // the open transaction. nullopt when no such position exists yet (a record due before the cut
  // is still on its way to the producer, or a dead letter or behind record is unacknowledged).
  std::optional<RecordPosition> TransactionCheckpoint(int64_t cut_ms, int64_t now_ms,
                                                      std::optional<RecordPosition> last_produced);
  // The low watermark and metadata to commit at that checkpoint; nullopt when nothing moved
  // (and not force) or while catching_up().
  std::optional<CommittedOffset> TransactionProgress(RecordPosition checkpoint, int64_t now_ms,
                                                     bool force);
  // The transaction holding TransactionProgress(checkpoint) committed.
  void TransactionCommitted(RecordPosition checkpoint) { tracker_.Advance(checkpoint); }
  // At revocation, after the last transaction committed and the checkpoint was persisted.
  Status MarkClosedCleanly();

  // Persists the watermark when it moved and deletes hour files wholly before it (revocation:
  // whatever moved it).
  Status PersistCheckpoint(int64_t now_ms);
  // The periodic write in steps, so the file write can run on another thread (DiskWorker): the
  // checkpoint to write, or nullopt when the watermark has not moved, a write is in flight, or
  // it moved only with the clock (nothing acknowledged since the last write) and the last write
  // is less than kClockOnlyCheckpointMs old; then, on the owner thread, what the write returned
  // (ok: it becomes last_persisted() and hour files wholly before it are deleted).
  // WriteDeliveryCheckpoint touches only the CHECKPOINT files, so the store can be used
  // meanwhile.
  std::optional<storage::DeliveryCheckpoint> TakeCheckpointDue(int64_t now_ms);
  Status CheckpointWritten(const storage::DeliveryCheckpoint& cp, const Status& write_status);
  RecordPosition last_persisted() const { return last_persisted_; }

  // A watermark that passed no acknowledged record since the last write only followed the
  // clock: a crash that loses it re-delivers nothing, so it is written this rarely instead of
  // every interval (an idle store would otherwise write and fdatasync it ten times a second).
  static constexpr int64_t kClockOnlyCheckpointMs = 1000;

 private:
  std::optional<storage::DeliveryCheckpoint> TakeCheckpoint(int64_t now_ms);
  PartitionStore(TopicPartitionId id, std::unique_ptr<storage::DelayLogStore> log,
                 SourceOffsetMarker marker, RecordPosition start, bool had_checkpoint,
                 int64_t checkpoint_written_ms, std::string store_id, bool rebuilt,
                 bool exactly_once);
  bool Unchanged(const PartitionProgress::Snapshot& snapshot, int64_t now_ms) const;
  // The delivered watermark: with exactly_once the last one a transaction committed.
  RecordPosition CurrentWatermark(int64_t now_ms);
  // Where the records with source offset `offset` are placed in epoch_hour (a crash can leave one
  // stored twice); damage on the search path makes it read the hour second by second.
  Result<std::vector<int64_t>> FindInHour(int64_t epoch_hour, int64_t offset,
                                          std::vector<std::string>* damage);
  std::optional<CommittedOffset> RecordCommit(const PartitionProgress::Snapshot& snapshot,
                                              RecordPosition watermark, int64_t late_below,
                                              int64_t now_ms);

  TopicPartitionId id_;
  const bool exactly_once_;
  std::string store_id_;
  bool rebuilt_;
  bool reused_after_takeover_ = false;
  int64_t checkpoint_written_ms_;  // wall clock of the last checkpoint write before this open
  std::unique_ptr<storage::DelayLogStore> log_;
  SourceOffsetMarker marker_;
  std::optional<int64_t> stored_below_;
  RecordPosition start_;
  std::string damaged_checkpoint_;
  bool had_checkpoint_;
  DeliveryTracker tracker_;
  SourceOffsets offsets_;
  PartitionProgress progress_;
  std::optional<ProgressMetadata> finished_;  // the skip rule while re-reading
  int64_t resumed_at_ms_ = 0;
  std::optional<CommittedOffset> last_commit_;  // what TakeProgressToCommit returned last
  int64_t last_commit_ms_ = 0;
  std::optional<PartitionProgress::Snapshot> last_snapshot_;
  // Records acknowledged since the store opened; its value at the last progress commit, at the
  // last persisted checkpoint and at the checkpoint write in flight tell whether either moved
  // past a delivery or only followed the clock.
  uint64_t acknowledged_count_ = 0;
  uint64_t acknowledged_count_at_commit_ = 0;
  int64_t preloaded_until_second_;
  std::optional<int64_t> deliveries_held_until_;
  RecordPosition last_persisted_;
  int64_t last_persisted_at_ms_ = 0;
  uint64_t acknowledged_count_at_persisted_ = 0;
  uint64_t acknowledged_count_at_in_flight_ = 0;
  bool checkpoint_in_flight_ = false;
  int64_t deleted_before_hour_ = 0;  // hour files before this hour were deleted
};

// The stores of the assigned partitions, by partition.
using PartitionStores = std::map<TopicPartitionId, std::unique_ptr<PartitionStore>>;

}  // namespace delaybridge::plugin
