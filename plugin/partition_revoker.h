// PartitionRevoker: the order in which the bridge gives up partitions (a rebalance revokes
// them, or shutdown revokes all), so that the next owner misses nothing and repeats as little
// as possible:
//   0. the disk work in flight (group commit, checkpoint writes) finishes and takes effect;
//   1. every appended record of the partitions is made durable (the stores are synced);
//   exactly_once: a transaction commits what was produced, with every partition's progress;
//   2. the delivery thread releases the partitions: it waits for the acknowledgements of what
//      was produced and forgets the rest (its next owner delivers it);
//   3. the acknowledgements are applied to the stores;
//   at least once: the markers are written and the progress committed (OffsetCommitter);
//   4. the checkpoints are written and the stores closed.
// A partition lost under exactly_once (the group gave it to another member already) is rolled
// back instead: its open transaction must never commit, and nothing of it is committed.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "core/clock.h"
#include "plugin/ack_batch.h"
#include "plugin/delivery_control.h"
#include "plugin/disk_jobs.h"
#include "plugin/log.h"
#include "plugin/offset_committer.h"
#include "plugin/partition_store.h"

namespace delaybridge::plugin {

// What a revocation under exactly_once needs from the transaction cutter.
class RevokeTransactions {
 public:
  virtual ~RevokeTransactions() = default;
  // A transaction failed: nothing may be committed any more.
  virtual bool transaction_failed() const = 0;
  // Commits a transaction with every partition's progress and leaves production stopped (the
  // revocation Resumes it once the partitions are released); false when none could commit.
  virtual bool CutBeforeRevoke() = 0;
  // Aborts the open transaction and reloads every store but the lost ones, which are dropped.
  virtual void RollBackLost(const std::vector<TopicPartitionId>& lost) = 0;
};

class PartitionRevoker {
 public:
  // transactions: null for at least once. apply_acks: applies acknowledgements to the stores
  // (and the bridge's counters). flush_timeout_ms: how long the release waits for the
  // acknowledgements of produced records.
  PartitionRevoker(PartitionStores& stores, DiskJobs& disk, DeliveryControl& delivery,
                   OffsetCommitter& committer, RevokeTransactions* transactions,
                   std::function<void(const AckBatch&)> apply_acks, Logger& logger,
                   const Clock& clock, int flush_timeout_ms);

  // owned: revoked partitions whose stores are open. lost: the group gave them to another member
  // already.
  void Revoke(const std::vector<TopicPartitionId>& owned, bool lost);

 private:
  // Writes the checkpoints (exactly_once: only after a committed transaction, then the marker
  // and the clean close) and closes the stores. released_records: how many records of these
  // stores the delivery thread dropped from memory. committed: exactly_once, the last
  // transaction committed (else the stores are left to be rebuilt).
  void CloseStores(const std::vector<TopicPartitionId>& ids, size_t released_records,
                   bool committed);

  PartitionStores& stores_;
  DiskJobs& disk_;
  DeliveryControl& delivery_;
  OffsetCommitter& committer_;
  RevokeTransactions* const transactions_;
  const std::function<void(const AckBatch&)> apply_acks_;
  Logger& logger_;
  const Clock& clock_;
  const int flush_timeout_ms_;
};

}  // namespace delaybridge::plugin
