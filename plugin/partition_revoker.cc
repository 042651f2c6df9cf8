#include "plugin/partition_revoker.h"

#include <string>
#include <utility>

namespace delaybridge::plugin {

PartitionRevoker::PartitionRevoker(PartitionStores& stores, DiskJobs& disk,
                                   DeliveryControl& delivery, OffsetCommitter& committer,
                                   RevokeTransactions* transactions,
                                   std::function<void(const AckBatch&)> apply_acks, Logger& logger,
                                   const Clock& clock, int flush_timeout_ms)
    : stores_(stores),
      disk_(disk),
      delivery_(delivery),
      committer_(committer),
      transactions_(transactions),
      apply_acks_(std::move(apply_acks)),
      logger_(logger),
      clock_(clock),
      flush_timeout_ms_(flush_timeout_ms) {}

void PartitionRevoker::Revoke(const std::vector<TopicPartitionId>& owned, bool lost) {
  const bool exactly_once = transactions_ != nullptr;
  if (lost && exactly_once && !transactions_->transaction_failed()) {
    // Their new owner may already deliver them again: the open transaction must never commit.
    transactions_->RollBackLost(owned);
    return;
  }
  // 0. Let the disk work in flight (group commit, checkpoint writes) finish and take effect.
  disk_.Finish();
  // 1. Make every appended record durable.
  for (const auto& id : owned) {
    if (Status s = stores_.at(id)->Sync(); !s.ok()) logger_.Error(s.ToString());
  }
  // exactly_once: commit what was produced, with every partition's progress, in a transaction.
  const bool committed =
      exactly_once && !transactions_->transaction_failed() && transactions_->CutBeforeRevoke();
  // 2. Wait for the acknowledgements of what is in flight (deliveries and dead letters), apply
  //    them, and have the delivery thread drop the partitions' records.
  const DeliveryControl::ReleaseResult released = delivery_.Release(owned, flush_timeout_ms_);
  if (!released.flushed) {
    logger_.Warn("revoke: some produced records were not acknowledged within " +
                 std::to_string(flush_timeout_ms_) + " ms; they will be delivered again");
  }
  if (committed) delivery_.Resume();  // the cut left it holding
  apply_acks_(delivery_.TakeAcks());
  if (exactly_once) return CloseStores(owned, released.released, committed);
  // 3. Mark what the stores durably hold, and commit the partitions' progress to Kafka.
  committer_.CommitBeforeClose(owned, clock_.now_ms());
  // 4. Checkpoint, then close the stores.
  CloseStores(owned, released.released, true);
}

void PartitionRevoker::CloseStores(const std::vector<TopicPartitionId>& ids,
                                   size_t released_records, bool committed) {
  const int64_t now_ms = clock_.now_ms();
  for (const auto& id : ids) {
    PartitionStore& store = *stores_.at(id);
    if (store.exactly_once() && committed) {
      // The marker covers exactly what the store holds, and the last transaction committed.
      Status closed = store.PersistCheckpoint(now_ms);
      if (auto offset = store.offsets().Committable(); closed.ok() && offset) {
        closed = store.MarkCommittable(*offset);
      }
      if (closed.ok()) closed = store.MarkClosedCleanly();
      if (!closed.ok()) logger_.Error(closed.ToString() + " (the store is rebuilt when assigned)");
    } else if (!store.exactly_once()) {
      if (Status s = store.PersistCheckpoint(now_ms); !s.ok()) logger_.Error(s.ToString());
    }
    const auto last_commit = store.last_commit();
    logger_.Info("revoked " + id.ToString() + ": checkpoint=" + ToString(store.last_persisted()) +
                 " committed_offset=" +
                 (last_commit
                      ? std::to_string(last_commit->offset) + " (" + last_commit->metadata + ")"
                      : std::string("none")));
    stores_.erase(id);
  }
  logger_.Info("released " + std::to_string(released_records) + " records from memory");
}

}  // namespace delaybridge::plugin
