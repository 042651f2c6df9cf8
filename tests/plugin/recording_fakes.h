// Hand-written fakes of the interfaces the bridge's parts depend on (DiskJobs, DeliveryControl,
// GroupOffsetCommits, RevokeTransactions). Each appends what it was asked to one shared CallLog,
// so a test asserts the order of steps across them; hooks let a test look at the stores at the
// moment of a call.
//
// Thread-safety: one test thread.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "plugin/delivery_control.h"
#include "plugin/disk_jobs.h"
#include "plugin/group_offset_commits.h"
#include "plugin/partition_revoker.h"

namespace delaybridge::plugin {

using CallLog = std::vector<std::string>;

// name, then what the hook says (built by appends: GCC 12 at -O3 warns falsely on
// "literal" + std::string).
inline std::string Entry(std::string name, const std::function<std::string()>& hook) {
  if (hook) name += hook();
  return name;
}

// Jobs wait until the test runs them (RunAll), or until Finish, as DiskWorker's do.
class FakeDiskJobs final : public DiskJobs {
 public:
  explicit FakeDiskJobs(CallLog& calls) : calls_(calls) {}
  void Submit(Work work, Completion done) override {
    jobs_.emplace_back(std::move(work), std::move(done));
  }
  void Finish() override {
    calls_.push_back("disk finished");
    RunAll();
  }
  void RunAll() {
    while (!jobs_.empty()) {
      auto [work, done] = std::move(jobs_.front());
      jobs_.pop_front();
      done(work());
    }
  }
  size_t pending() const { return jobs_.size(); }

 private:
  CallLog& calls_;
  std::deque<std::pair<Work, Completion>> jobs_;
};

class FakeDelivery final : public DeliveryControl {
 public:
  explicit FakeDelivery(CallLog& calls) : calls_(calls) {}
  ReleaseResult Release(const std::vector<TopicPartitionId>& stores, int) override {
    calls_.push_back(Entry("release", on_release));
    released = stores;
    return ReleaseResult{true, records_released};
  }
  void Resume() override { calls_.push_back("resume"); }
  AckBatch TakeAcks() override {
    calls_.push_back("take acks");
    return std::exchange(acks, AckBatch{});
  }

  std::function<std::string()> on_release;  // appended to the "release" entry
  size_t records_released = 0;
  AckBatch acks;  // what TakeAcks returns (once)
  std::vector<TopicPartitionId> released;

 private:
  CallLog& calls_;
};

class FakeGroupCommits final : public GroupOffsetCommits {
 public:
  explicit FakeGroupCommits(CallLog& calls) : calls_(calls) {}
  void CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override {
    calls_.push_back("commit async");
    async_commits.push_back(offsets);
  }
  Status CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override {
    calls_.push_back(Entry("commit sync", on_commit_sync));
    sync_commits.push_back(offsets);
    return Status::Ok();
  }

  std::function<std::string()> on_commit_sync;  // appended to the "commit sync" entry
  std::vector<std::map<TopicPartitionId, CommittedOffset>> async_commits;
  std::vector<std::map<TopicPartitionId, CommittedOffset>> sync_commits;

 private:
  CallLog& calls_;
};

class FakeTransactions final : public RevokeTransactions {
 public:
  explicit FakeTransactions(CallLog& calls) : calls_(calls) {}
  bool transaction_failed() const override { return failed; }
  bool CutBeforeRevoke() override {
    calls_.push_back(Entry("cut", on_cut));
    return cut_commits;
  }
  void RollBackLost(const std::vector<TopicPartitionId>& lost) override {
    std::string entry = "roll back";
    for (const auto& id : lost) {
      entry += " ";
      entry += id.ToString();
    }
    calls_.push_back(entry);
  }

  bool failed = false;
  bool cut_commits = true;
  std::function<std::string()> on_cut;  // appended to the "cut" entry

 private:
  CallLog& calls_;
};

}  // namespace delaybridge::plugin
