#include "plugin/offset_committer.h"

#include <chrono>
#include <map>
#include <string>
#include <utility>

#include "storage/parallel_sync.h"

namespace delaybridge::plugin {

namespace {

constexpr int64_t kSlowSyncMs = 100;  // a store sync this slow is worth a warning

}  // namespace

void EndRebuildWhenCaughtUp(PartitionStore& store, int64_t now_ms, Logger& logger) {
  if (auto done = store.EndRebuildWhenCaughtUp(now_ms)) {
    logger.Info("rebuilt " + store.id().ToString() + ": read the delay topic again up to offset " +
                std::to_string(done->caught_up_offset) + " in " + std::to_string(done->elapsed_ms) +
                " ms; committing this store's progress");
  }
}

OffsetCommitter::OffsetCommitter(PartitionStores& stores, DiskJobs& disk, ConsumerControl& group,
                                 Logger& logger, WarningThrottle& warnings,
                                 std::function<void(const Status&)> fail)
    : stores_(stores),
      disk_(disk),
      group_(group),
      logger_(logger),
      warnings_(warnings),
      fail_(std::move(fail)) {}

void OffsetCommitter::GroupCommit() {
  if (group_commit_in_flight_) return;  // the timer starts the next one after it finished
  auto syncs = std::make_shared<std::vector<StoreSync>>();
  for (auto& [id, store] : stores_) {
    if (!store->needs_sync()) continue;
    auto begun = store->BeginSync();
    if (!begun.ok()) {
      // Nothing was synced and the store stays usable (a full disk): its offsets wait.
      ++sync_failures_;
      warnings_.Warn(begun.status().ToString() + " (retried at the next group commit)");
      continue;
    }
    syncs->push_back(StoreSync{id, std::move(begun).value(), Status::Ok()});
  }
  if (syncs->empty()) return MarkDurableOffsets();  // dead-letter acknowledgements count too
  group_commit_in_flight_ = true;
  const auto started = std::chrono::steady_clock::now();
  disk_.Submit(
      [syncs] {
        // All stores at once: the commit waits for the slowest store, not for their sum.
        std::vector<std::function<Status()>> runs;
        for (StoreSync& s : *syncs) {
          runs.push_back([&s] {
            s.run_status = s.sync->Run();
            return Status::Ok();
          });
        }
        return storage::RunConcurrently(runs);
      },
      [this, syncs, started](const Status&) {
        const int64_t disk_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::steady_clock::now() - started)
                                    .count();
        group_commit_us_.Record(disk_us);
        FinishGroupCommit(*syncs, disk_us / 1000);
      });
}

void OffsetCommitter::FinishGroupCommit(std::vector<StoreSync>& syncs, int64_t disk_ms) {
  group_commit_in_flight_ = false;
  Status failed;
  for (StoreSync& s : syncs) {
    // Revocation finishes the disk work before it closes a store, so the store is there. Every
    // store's sync is finished, so none is left in flight by another's failure.
    Status finished = stores_.at(s.store)->FinishSync(std::move(s.sync), s.run_status);
    if (!finished.ok() && failed.ok()) failed = finished;
  }
  // A failed fdatasync may have lost pages: only a reopen (the restart) can tell what is there.
  if (!failed.ok()) return fail_(failed);
  if (disk_ms >= kSlowSyncMs) {
    warnings_.Warn("slow disk: syncing " + std::to_string(syncs.size()) + " stores took " +
                   std::to_string(disk_ms) + " ms (ingest and delivery go on; offsets are " +
                   "marked when it is done)");
  }
  MarkDurableOffsets();
}

void OffsetCommitter::MarkDurableOffsets() {
  // Records acknowledged in a transaction that then failed are not finished.
  if (marking_stopped_) return;
  for (auto& [id, store] : stores_) {
    if (auto offset = store->offsets().TakeCommittable()) {
      if (Status s = store->MarkCommittable(*offset); !s.ok()) warnings_.Warn(s.ToString());
    }
  }
}

void OffsetCommitter::CommitProgress(int64_t now_ms) {
  std::map<TopicPartitionId, CommittedOffset> commits;
  for (auto& [id, store] : stores_) {
    EndRebuildWhenCaughtUp(*store, now_ms, logger_);
    if (auto commit = store->TakeProgressToCommit(now_ms, false)) commits[id] = std::move(*commit);
  }
  group_.CommitAsync(commits);
}

void OffsetCommitter::CommitBeforeClose(const std::vector<TopicPartitionId>& ids, int64_t now_ms) {
  std::map<TopicPartitionId, CommittedOffset> commits;
  for (const auto& id : ids) {
    PartitionStore& store = *stores_.at(id);
    if (auto offset = store.offsets().Committable()) {
      if (Status s = store.MarkCommittable(*offset); !s.ok()) logger_.Warn(s.ToString());
    }
    EndRebuildWhenCaughtUp(store, now_ms, logger_);
    if (auto commit = store.TakeProgressToCommit(now_ms, true)) commits[id] = *commit;
  }
  if (Status s = group_.CommitSync(commits); !s.ok()) {
    logger_.Warn("revoke: " + s.ToString() +
                 " (the next owner starts from the previous commit: more records are read again, "
                 "and some delivered again)");
  }
}

}  // namespace delaybridge::plugin
