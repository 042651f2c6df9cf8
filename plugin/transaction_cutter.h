// TransactionCutter: exactly_once's transactions (docs/bridge.md, "Exactly once"). No offset is
// committed on its own: each cut (every transaction_interval_ms, before an assignment and before
// a revocation) has the delivery thread produce what is due and hold, applies the
// acknowledgements, computes each partition's checkpoint from that still picture, and commits
// the deliveries and dead letters produced since the last cut together with each partition's
// progress. Its rules:
//  - a cut commits only when every partition's checkpoint is exact (else it is put off) and the
//    consumer is a member of the group (a transaction committed without a member id would not
//    be fenced);
//  - a failed cut aborts the transaction, and every store (but the lost ones) is reopened from
//    the last committed transaction, reading moved back to it (RollBack);
//  - a partition lost to another member is rolled back: its open transaction never commits;
//  - it gives up (the bridge stops; nothing is marked or committed any more) when the producer
//    cannot go on, or after kMaxRollbacks aborts in a row that taught nothing about a refused
//    record.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "plugin/ack_batch.h"
#include "plugin/consumer_control.h"
#include "plugin/delivery_control.h"
#include "plugin/disk_jobs.h"
#include "plugin/log.h"
#include "plugin/offset_committer.h"
#include "plugin/partition_revoker.h"
#include "plugin/partition_store.h"

namespace delaybridge::plugin {

class TransactionCutter final : public RevokeTransactions {
 public:
  static constexpr int kMaxRollbacks = 20;        // aborts in a row, none teaching a refusal
  static constexpr int64_t kNotExactRetryMs = 5;  // a cut put off: the due record is on its way

  enum class CutResult { kCommitted, kNotExact, kNotMember, kRolledBack, kFailed };

  // What the cutter needs from the bridge that wires it.
  struct Hooks {
    // Applies acknowledgements to the stores (and the bridge's counters).
    std::function<void(const AckBatch&)> apply_acks;
    // After a rollback closed every store: forgets what was consumed for `dropped` and not yet
    // stored, opens the stores of `reload` from the group's last committed transaction and loads
    // them soon; returns where reading starts, or an error when the bridge is stopping (a store
    // could not be opened).
    std::function<Result<std::map<TopicPartitionId, int64_t>>(
        const std::vector<TopicPartitionId>& dropped, const std::vector<TopicPartitionId>& reload)>
        reopen_stores;
    // The bridge cannot go on.
    std::function<void(const Status&)> fail;
  };
  // flush_timeout_ms: how long a cut waits for the acknowledgements of produced records, and a
  // revocation for an exact cut.
  TransactionCutter(PartitionStores& stores, DiskJobs& disk, DeliveryControl& delivery,
                    ConsumerControl& consumer, OffsetCommitter& committer, Hooks hooks,
                    Logger& logger, const Clock& clock, int flush_timeout_ms,
                    int transaction_timeout_ms);

  // force: commit every partition's progress, changed or not; resume: let the delivery thread
  // produce again once committed (else the caller Resumes it).
  CutResult Cut(bool force, bool resume);
  // An aborted transaction: its acknowledgements are in the stores, so every store except the
  // lost ones is reopened from the last committed transaction and reading moves back to it.
  // Gives up when the producer cannot go on or after kMaxRollbacks in a row that taught nothing
  // about a refused record.
  CutResult RollBack(const Status& why, const std::vector<TopicPartitionId>& lost);

  // RevokeTransactions.
  bool transaction_failed() const override { return failed_; }
  // Cuts until one is exact (up to flush_timeout_ms).
  bool CutBeforeRevoke() override;
  void RollBackLost(const std::vector<TopicPartitionId>& lost) override;

  uint64_t transactions() const { return transactions_; }
  uint64_t rollbacks() const { return rollbacks_; }
  uint64_t cuts_put_off() const { return cuts_put_off_; }
  // The longest cut (deliveries wait meanwhile) since the last call.
  int64_t TakeLongestCutMs() { return std::exchange(longest_cut_ms_, 0); }

 private:
  void Fail(const Status& status);

  PartitionStores& stores_;
  DiskJobs& disk_;
  DeliveryControl& delivery_;
  ConsumerControl& consumer_;
  OffsetCommitter& committer_;
  const Hooks hooks_;
  Logger& logger_;
  const Clock& clock_;
  const int flush_timeout_ms_;
  const int transaction_timeout_ms_;

  bool failed_ = false;  // nothing may be committed or marked any more
  uint64_t transactions_ = 0;
  uint64_t rollbacks_ = 0;  // transactions aborted, stores reloaded
  int rollbacks_in_a_row_ = 0;
  uint64_t cuts_put_off_ = 0;  // a due record was on its way
  int64_t longest_cut_ms_ = 0;
};

}  // namespace delaybridge::plugin
