// Hand-written fakes of the interfaces the bridge's parts depend on (DiskJobs, DeliveryControl,
// RecordHandover, ConsumerControl, RevokeTransactions). Each appends what it was asked to one
// shared CallLog, so a test asserts the order of steps across them; hooks let a test look at the
// stores at the moment of a call.
//
// Thread-safety: one test thread.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "plugin/consumer_control.h"
#include "plugin/delivery_control.h"
#include "plugin/disk_jobs.h"
#include "plugin/partition_revoker.h"
#include "plugin/record_handover.h"

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
  AckBatch TakeAcks() override {
    calls_.push_back("take acks");
    return std::exchange(acks, AckBatch{});
  }
  PreparedCommit PrepareCommit(int) override {
    calls_.push_back("prepare commit");
    PreparedCommit prepared;
    prepared.status = prepare_status;
    prepared.cut_ms = cut_ms;
    prepared.acks = std::exchange(acks, AckBatch{});
    return prepared;
  }
  Status CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                           const rd_kafka_consumer_group_metadata_t*, int, bool resume) override {
    std::string entry = "commit transaction";
    for (const auto& [id, commit] : offsets) {
      entry += " ";
      entry += id.ToString();
    }
    if (resume) entry += ", resume";
    calls_.push_back(Entry(entry, on_commit_transaction));
    committed_offsets.push_back(offsets);
    return commit_status;
  }
  void Resume() override { calls_.push_back("resume"); }
  AbortResult AbortTransaction(int) override {
    calls_.push_back("abort transaction");
    return abort_result;
  }

  std::function<std::string()> on_release;             // appended to the "release" entry
  std::function<std::string()> on_commit_transaction;  // appended to its entry
  size_t records_released = 0;
  AckBatch acks;  // what TakeAcks or PrepareCommit returns (once)
  std::vector<TopicPartitionId> released;
  Status prepare_status;
  int64_t cut_ms = 0;
  Status commit_status;
  std::vector<std::map<TopicPartitionId, CommittedOffset>> committed_offsets;
  AbortResult abort_result;

 private:
  CallLog& calls_;
};

class FakeConsumer final : public ConsumerControl {
 public:
  explicit FakeConsumer(CallLog& calls) : calls_(calls) {}
  Result<std::map<TopicPartitionId, CommittedOffset>> Committed(
      const std::vector<TopicPartitionId>&, int) override {
    calls_.push_back("committed");
    if (!committed_status.ok()) return committed_status;
    return committed;
  }
  Result<Watermarks> QueryWatermarks(const TopicPartitionId& id, int) const override {
    auto it = watermarks.find(id);
    if (it == watermarks.end()) return Status::Unavailable("no leader for " + id.ToString());
    return it->second;
  }
  std::optional<int64_t> Position(const TopicPartitionId& id) const override {
    auto it = positions.find(id);
    return it == positions.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  void CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override {
    calls_.push_back("commit async");
    async_commits.push_back(offsets);
  }
  Status CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override {
    calls_.push_back(Entry("commit sync", on_commit_sync));
    sync_commits.push_back(offsets);
    return Status::Ok();
  }

  Result<GroupMetadata> CurrentGroupMetadata() const override {
    if (!member) return Status::Unavailable("not a member of the group");
    return GroupMetadata(nullptr, [](rd_kafka_consumer_group_metadata_t*) {});
  }
  Status Seek(const std::vector<TopicPartitionId>& partitions,
              const std::map<TopicPartitionId, int64_t>&) override {
    std::string entry = "seek";
    for (const auto& id : partitions) {
      entry += " ";
      entry += id.ToString();
    }
    calls_.push_back(entry);
    return Status::Ok();
  }
  void BrokersAnswered() override { calls_.push_back("brokers answered"); }

  bool member = true;
  Status committed_status;                                // not ok: Committed fails so
  std::map<TopicPartitionId, CommittedOffset> committed;  // what Committed returns
  std::map<TopicPartitionId, Watermarks> watermarks;      // absent: QueryWatermarks fails
  std::map<TopicPartitionId, int64_t> positions;          // absent: no position yet
  std::function<std::string()> on_commit_sync;            // appended to the "commit sync" entry
  std::vector<std::map<TopicPartitionId, CommittedOffset>> async_commits;
  std::vector<std::map<TopicPartitionId, CommittedOffset>> sync_commits;

 private:
  CallLog& calls_;
};

// What the ingest side handed over, each call logged; the records kept for the test to look at.
class FakeHandover final : public RecordHandover {
 public:
  explicit FakeHandover(CallLog& calls) : calls_(calls) {}
  void Schedule(std::vector<DueRecord> records) override {
    if (records.empty()) return;  // an empty batch hands nothing over
    std::string entry = "schedule";
    for (const DueRecord& r : records) {
      entry += " ";
      entry += std::to_string(r.record.source_offset());
    }
    calls_.push_back(entry);
    for (DueRecord& r : records) scheduled.push_back(std::move(r));
  }
  void ProduceNow(TopicPartitionId store, EncodedRecord record, DeliveryForm form) override {
    std::string entry = form == DeliveryForm::kDeadLetter ? "dead letter " : "produce now ";
    entry += std::to_string(record.source_offset());
    calls_.push_back(entry);
    produced_now.push_back({std::move(store), record.Decode(), form});
  }
  void Cancel(TopicPartitionId store, int64_t target_offset, bool counted) override {
    std::string entry = "cancel ";
    entry += store.ToString();
    entry += "/";
    entry += std::to_string(target_offset);
    if (counted) entry += ", counted";
    calls_.push_back(entry);
  }
  size_t in_memory() const override { return scheduled.size(); }

  struct ProducedNow {
    TopicPartitionId store;
    DelayedRecord record;
    DeliveryForm form;
  };
  std::vector<DueRecord> scheduled;
  std::vector<ProducedNow> produced_now;

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
