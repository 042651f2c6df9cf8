#include "plugin/transaction_cutter.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace delaybridge::plugin {

using std::chrono::milliseconds;

TransactionCutter::TransactionCutter(PartitionStores& stores, DiskJobs& disk,
                                     DeliveryControl& delivery, ConsumerControl& consumer,
                                     OffsetCommitter& committer, Hooks hooks, Logger& logger,
                                     const Clock& clock, int flush_timeout_ms,
                                     int transaction_timeout_ms)
    : stores_(stores),
      disk_(disk),
      delivery_(delivery),
      consumer_(consumer),
      committer_(committer),
      hooks_(std::move(hooks)),
      logger_(logger),
      clock_(clock),
      flush_timeout_ms_(flush_timeout_ms),
      transaction_timeout_ms_(transaction_timeout_ms) {}

TransactionCutter::CutResult TransactionCutter::Cut(bool force, bool resume) {
  const auto started = std::chrono::steady_clock::now();
  DeliveryControl::PreparedCommit prepared = delivery_.PrepareCommit(flush_timeout_ms_);
  if (!prepared.status.ok()) return RollBack(prepared.status, {});
  hooks_.apply_acks(prepared.acks);
  std::set<TopicPartitionId> touched;
  for (const auto& [id, position] : prepared.last_produced) touched.insert(id);
  for (const auto& ack : prepared.acks.dead_lettered) touched.insert(ack.store);
  for (const auto& answer : prepared.acks.cancels) touched.insert(answer.store);
  const int64_t now_ms = clock_.now_ms();
  std::map<TopicPartitionId, RecordPosition> checkpoints;
  for (auto& [id, store] : stores_) {
    EndRebuildWhenCaughtUp(*store, now_ms, logger_);
    if (store->catching_up()) continue;  // delivers nothing meanwhile
    const auto last = prepared.last_produced.find(id);
    const auto checkpoint = store->TransactionCheckpoint(
        prepared.cut_ms, now_ms,
        last == prepared.last_produced.end() ? std::nullopt : std::optional(last->second));
    if (!checkpoint) {
      ++cuts_put_off_;
      delivery_.Resume();
      return CutResult::kNotExact;
    }
    checkpoints[id] = *checkpoint;
  }
  const Result<GroupMetadata> group = consumer_.CurrentGroupMetadata();
  if (!group.ok()) {
    delivery_.Resume();
    return CutResult::kNotMember;
  }
  std::map<TopicPartitionId, CommittedOffset> commits;
  for (const auto& [id, checkpoint] : checkpoints) {
    if (auto commit =
            stores_[id]->TransactionProgress(checkpoint, now_ms, force || touched.count(id))) {
      commits[id] = std::move(*commit);
    }
  }
  if (Status s =
          delivery_.CommitTransaction(commits, group->get(), transaction_timeout_ms_, resume);
      !s.ok()) {
    return RollBack(s, {});
  }
  for (const auto& [id, commit] : commits) stores_[id]->TransactionCommitted(checkpoints[id]);
  if (!commits.empty()) consumer_.BrokersAnswered();  // the transaction coordinator did
  ++transactions_;
  rollbacks_in_a_row_ = 0;
  longest_cut_ms_ = std::max<int64_t>(
      longest_cut_ms_,
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started).count());
  return CutResult::kCommitted;
}

bool TransactionCutter::CutBeforeRevoke() {
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(flush_timeout_ms_);
  while (!failed_) {
    // Nothing more may be produced until the partitions are released.
    const CutResult result = Cut(true, false);
    if (result == CutResult::kCommitted || result == CutResult::kFailed) {
      return result == CutResult::kCommitted;
    }
    // kRolledBack: the reloaded stores are caught up or rebuilding; the next cut commits them.
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(kNotExactRetryMs));
  }
  if (!failed_) {
    Fail(Status::Unavailable("revoke: no transaction could commit within " +
                             std::to_string(flush_timeout_ms_) + " ms"));
  }
  return false;
}

void TransactionCutter::RollBackLost(const std::vector<TopicPartitionId>& lost) {
  RollBack(Status::Unavailable("lost " + std::to_string(lost.size()) +
                               " partition(s): the group gave them to another member (a session "
                               "timeout missed)"),
           lost);
}

TransactionCutter::CutResult TransactionCutter::RollBack(
    const Status& why, const std::vector<TopicPartitionId>& lost) {
  if (why.code() == Status::Code::kFailedPrecondition || ++rollbacks_in_a_row_ > kMaxRollbacks) {
    Fail(why);
    return CutResult::kFailed;
  }
  ++rollbacks_;
  const DeliveryControl::AbortResult aborted = delivery_.AbortTransaction(transaction_timeout_ms_);
  if (!aborted.status.ok()) {
    Fail(aborted.status);
    return CutResult::kFailed;
  }
  // What the aborted transaction acknowledged is in the stores' trackers and progress: the stores
  // are dropped without writing anything, and reopened from the last committed transaction
  // (rebuilt from the delay topic: no clean close).
  std::vector<TopicPartitionId> all;
  std::vector<TopicPartitionId> reload;
  for (const auto& [id, store] : stores_) {
    all.push_back(id);
    if (std::find(lost.begin(), lost.end(), id) == lost.end()) reload.push_back(id);
  }
  logger_.Warn("transaction aborted: " + why.message() +
               "; none of it is visible to read_committed consumers. Reloading " +
               std::to_string(reload.size()) +
               " partition(s) from the last committed transaction (" +
               std::to_string(rollbacks_in_a_row_) + " in a row)");
  // A refused record moves on to its next form in a few aborts each (alone, dead letter,
  // reduced): only aborts that taught nothing count towards giving up.
  if (aborted.learnt_refusal) rollbacks_in_a_row_ = 0;
  disk_.Finish();  // its completions look the stores up
  const DeliveryControl::ReleaseResult released = delivery_.Release(all, 0);
  stores_.clear();
  logger_.Info("released " + std::to_string(released.released) + " records from memory");
  Result<std::map<TopicPartitionId, int64_t>> starts = hooks_.reopen_stores(all, reload);
  if (!starts.ok()) return CutResult::kFailed;  // a store could not be opened
  if (Status s = consumer_.Seek(reload, *starts); !s.ok()) {
    Fail(s);
    return CutResult::kFailed;
  }
  delivery_.Resume();
  return CutResult::kRolledBack;
}

void TransactionCutter::Fail(const Status& status) {
  failed_ = true;
  committer_.StopMarking();
  hooks_.fail(Status::Unavailable("transaction failed: " + status.message() +
                                  " (nothing of it is visible to read_committed consumers; a "
                                  "restart resumes from the last committed one)"));
}

}  // namespace delaybridge::plugin
