// OffsetCommitter: the at-least-once commit rules of the bridge's stores. It owns the group
// commit (the fdatasyncs of every store with new appends, run together on the disk thread), the
// local source-offset markers (what a restart reads on from) and the progress committed to
// Kafka (each partition's low watermark with its metadata):
//  - a marker moves only after the fdatasync covering it finished (FinishSync settles the
//    offsets it covered), so a crash never skips a record the store does not hold;
//  - after a failed transaction (StopMarking) nothing is marked any more: what that
//    transaction acknowledged is not finished;
//  - progress is committed asynchronously when it moved, and synchronously, after marking, at
//    a revocation (CommitBeforeClose).
// With exactly_once the group commit and the markers are the same; progress goes into the
// transactions instead (TransactionCutter).
//
// Thread-safety: none; the bridge's event-loop thread owns it (completions of the disk jobs run
// there too).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/lateness_histogram.h"
#include "core/status.h"
#include "plugin/consumer_control.h"
#include "plugin/disk_jobs.h"
#include "plugin/log.h"
#include "plugin/partition_store.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

// Ends a store's rebuild once reading has passed the previous owner's ingest position (logging
// it): from then on the store's own progress is committed.
void EndRebuildWhenCaughtUp(PartitionStore& store, int64_t now_ms, Logger& logger);

class OffsetCommitter {
 public:
  // fail: a store cannot be used any more (a failed fdatasync may have lost pages); the bridge
  // stops.
  OffsetCommitter(PartitionStores& stores, DiskJobs& disk, ConsumerControl& group, Logger& logger,
                  WarningThrottle& warnings, std::function<void(const Status&)> fail);

  // Begins a sync of every store with new appends and runs their fdatasyncs on the disk thread;
  // when they finished, marks what the stores durably hold. Does nothing while one is running.
  void GroupCommit();
  // Writes each store's marker: the first source offset not yet durable or not yet acknowledged
  // by the dead-letter topic.
  void MarkDurableOffsets();
  // From now on nothing is marked: a transaction failed, and what it acknowledged is not
  // finished.
  void StopMarking() { marking_stopped_ = true; }

  // At least once: commits each partition's progress when it moved, without waiting.
  void CommitProgress(int64_t now_ms);
  // At least once, at a revocation, after the stores were synced and the acknowledgements
  // applied: marks what these stores durably hold, then commits their progress and waits.
  void CommitBeforeClose(const std::vector<TopicPartitionId>& ids, int64_t now_ms);

  uint64_t sync_failures() const { return sync_failures_; }
  const LatenessHistogram& group_commit_us() const { return group_commit_us_; }

 private:
  struct StoreSync {
    TopicPartitionId store;
    std::unique_ptr<storage::PendingSync> sync;
    Status run_status;
  };
  void FinishGroupCommit(std::vector<StoreSync>& syncs, int64_t disk_ms);

  PartitionStores& stores_;
  DiskJobs& disk_;
  ConsumerControl& group_;
  Logger& logger_;
  WarningThrottle& warnings_;
  std::function<void(const Status&)> fail_;

  bool group_commit_in_flight_ = false;
  bool marking_stopped_ = false;
  uint64_t sync_failures_ = 0;         // group-commit syncs that could not start (retried)
  LatenessHistogram group_commit_us_;  // every group commit's disk time
};

}  // namespace delaybridge::plugin
