// Cancels (x-delay-cancel) end to end against a mock cluster, the bridge as a child process:
// 10,000 records due 5-30 s ahead; a seeded 30% cancelled at random moments before they fall
// due, a few hundred more once their delivery was seen (too late), cancels naming cancel records
// (unknown) and malformed cancels (dead-lettered with the reason). No cancelled record is
// delivered, every other one exactly once, never early and intact, and the stats line counts
// cancelled, cancel_too_late and cancel_unknown exactly. Then the same with a kill -9 while
// most records are pending: cancels survive it.
#include <gtest/gtest.h>

#include <deque>
#include <iostream>
#include <set>

#include "tests/plugin/bridge_test_env.h"
#include "tests/plugin/delay_workload.h"
#include "tests/support/cancel_plan.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Shape = CancelTestShape;

class BridgeCancelTest : public BridgeTestEnv {
 protected:
  void SetUpRun(uint32_t seed) {
    std::cout << "cancel test seed " << seed << "\n";
    ASSERT_NO_FATAL_FAILURE(Prepare(BridgeTestOptions{}));
    ASSERT_NO_FATAL_FAILURE(StartBridge());
    workload_ = std::make_unique<DelayWorkload>(seed, delay_topic_, target_topic_, alt_topic_,
                                                options_.target_partitions);
    plan_ = std::make_unique<CancelPlan>(seed, Shape::kInTimeFraction, Shape::kLateFraction);
    auto reader =
        TestConsumer::Create(cluster_->bootstrap(), {{target_topic_, options_.target_partitions},
                                                     {alt_topic_, options_.target_partitions},
                                                     {dlq_topic_, 2}});
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    reader_ = std::move(reader).value();
  }

  // Produces the records batch by batch; the flush after each tells where its records landed,
  // which their cancels name. Cancels go out between batches.
  void ProduceRecords() {
    landed_.resize(Shape::kBatches * Shape::kRecordsPerBatch);
    for (int batch = 0; batch < Shape::kBatches; ++batch) {
      std::vector<uint64_t> seqs;
      for (int i = 0; i < Shape::kRecordsPerBatch; ++i) {
        const TestRecord record = workload_->Next(NowMs(), Shape::kMaxDelayMs, Shape::kMinDelayMs);
        seqs.push_back(*DelayWorkload::SeqOf(record));
        ASSERT_TRUE(producer_->Produce(record, &landed_[seqs.back()]).ok());
      }
      ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
      const int64_t acked_ms = NowMs();
      for (const uint64_t seq : seqs) {
        workload_->SetSource(seq, landed_[seq].partition, landed_[seq].offset);
        plan_->Consider(seq, acked_ms, workload_->expected().at(seq).deliver_at_ms);
      }
      ASSERT_NO_FATAL_FAILURE(Step(Shape::kBatchPause));
    }
    produced_ms_ = NowMs();
  }

  // Sends the cancels whose moment has come, reads what arrived for up to `poll`, and cancels
  // the records planned to be cancelled late whose delivery just arrived.
  void Step(milliseconds poll) {
    for (const uint64_t seq : plan_->TakeDue(NowMs())) {
      ASSERT_NO_FATAL_FAILURE(SendCancelOf(seq, "of "));
    }
    for (TestRecord& record : reader_->Poll(poll)) {
      if (record.topic == dlq_topic_) {
        dead_letters_.push_back({record.value, record.Header("cancel"),
                                 record.Header(kCancelHeader), record.Header("x-delay-error")});
        continue;
      }
      const std::optional<uint64_t> seq = DelayWorkload::SeqOf(record);
      if (seq && seen_.insert(*seq).second && plan_->TakeLate(*seq, NowMs())) {
        ASSERT_NO_FATAL_FAILURE(SendCancelOf(*seq, "late of "));
      }
      deliveries_.push_back(std::move(record));
    }
  }

  void SendCancelOf(uint64_t seq, const std::string& tag) {
    const int32_t partition = landed_[seq].partition;
    SendCancel(partition, RecordId(delay_topic_, partition, landed_[seq].offset),
               tag + std::to_string(seq));
  }

  void SendCancel(int32_t partition, std::optional<std::string> id, const std::string& tag) {
    TestRecord cancel;
    cancel.topic = delay_topic_;
    cancel.partition = partition;
    cancel.value = "cancel " + tag;
    cancel.headers = {{kCancelHeader, std::move(id)}, {"cancel", tag}};
    ASSERT_TRUE(producer_->Produce(cancel, &cancel_landed_.emplace_back()).ok());
  }

  // Cancels naming cancel records (the bridge knows no record there: unknown) and malformed
  // ones (dead-lettered), all to partition 1.
  void SendOddCancels() {
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());  // the cancels so far have offsets
    const std::vector<ProducedAt> cancels =
        FirstAcknowledged(cancel_landed_, Shape::kCancelsOfCancels);
    ASSERT_EQ(cancels.size(), Shape::kCancelsOfCancels) << "too few cancels sent yet";
    for (const ProducedAt& cancel : cancels) {
      const std::string id = RecordId(delay_topic_, cancel.partition, cancel.offset);
      ASSERT_NO_FATAL_FAILURE(SendCancel(cancel.partition, id, "of a cancel"));
    }
    malformed_ = MalformedCancels(delay_topic_, 1, target_topic_);
    for (const MalformedCancel& bad : malformed_) {
      ASSERT_NO_FATAL_FAILURE(SendCancel(1, bad.id, bad.name));
    }
  }

  // Steps until every cancel went out and every record not cancelled in time was delivered
  // (or the deadline), then lingers 3 s so that a late or duplicate delivery shows up.
  void StepUntilSettled() {
    const auto delivered = [this](uint64_t seq) { return seen_.contains(seq); };
    const auto deadline =
        std::chrono::steady_clock::now() + milliseconds(Shape::kMaxDelayMs) + seconds(60);
    while (!plan_->Done(workload_->expected().size(), delivered) &&
           std::chrono::steady_clock::now() < deadline) {
      ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
    for (int i = 0; i < 30; ++i) ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
  }

  // A kill -9, then a restart while cancels keep going out (StartBridge's wait, stepping).
  // Returns the outage: kill, and the time every partition was assigned again.
  std::pair<int64_t, int64_t> KillAndRestart() {
    const int64_t kill_ms = NowMs();
    const size_t sent = plan_->in_time_sent();
    bridge_->Kill();
    EXPECT_TRUE(bridge_->Start().ok());
    ++starts_;
    const auto deadline = std::chrono::steady_clock::now() + seconds(60);
    while (bridge_->CountInLog("INFO  assigned " + delay_topic_) <
               starts_ * static_cast<size_t>(options_.delay_partitions) &&
           bridge_->running() && std::chrono::steady_clock::now() < deadline) {
      Step(milliseconds(100));
    }
    const int64_t back_ms = NowMs();
    EXPECT_TRUE(bridge_->running()) << "bridge exited during the restart";
    std::cout << "cancel: killed at " << kill_ms << " with " << sent << " cancels sent, "
              << seen_.size() << " records delivered; back after " << back_ms - kill_ms << " ms\n";
    return {kill_ms, back_ms};
  }

  // Tells the workload which records were cancelled, then checks every delivery.
  DeliveryCheck CheckDeliveries() {
    plan_->ForEachCancelledInTime(
        [this](uint64_t seq, bool certain) { workload_->Cancel(seq, certain); });
    const DeliveryCheck check = workload_->Check(deliveries_);
    std::cout << "cancel: " << workload_->expected().size() << " records, " << plan_->in_time_sent()
              << " cancelled in time (" << plan_->certain() << " certainly), " << plan_->late_sent()
              << " late, " << Shape::kCancelsOfCancels << " of cancels, " << malformed_.size()
              << " malformed: " << check.Summary() << "\n";
    EXPECT_TRUE(check.errors.empty()) << check.Summary();
    EXPECT_TRUE(check.missing.empty()) << check.Summary();
    EXPECT_EQ(plan_->unsent() + plan_->late_unsent(), 0u) << "cancels left unsent";
    EXPECT_EQ(CheckDeadLetteredCancels(malformed_, dead_letters_, starts_ == 1),
              std::vector<std::string>());
    return check;
  }

  // Shows what became of the records cancelled in time that fell due while the bridge was down,
  // by when their cancel went out: what the kill put to the test.
  void ShowCancelsDueWhileDown(int64_t kill_ms, int64_t back_ms) const {
    std::map<std::string, std::pair<size_t, size_t>> down;  // sent -> delivered, not
    for (const auto& [seq, expected] : workload_->expected()) {
      const std::optional<int64_t> sent_ms = plan_->CancelSentMs(seq);
      if (!sent_ms || expected.deliver_at_ms < kill_ms || expected.deliver_at_ms > back_ms) {
        continue;
      }
      const std::string when = *sent_ms < kill_ms - CancelPlan::kCertainLeadMs
                                   ? "sent well before the kill"
                               : *sent_ms < kill_ms ? "sent just before the kill"
                                                    : "sent while down";
      ++(seen_.contains(seq) ? down[when].first : down[when].second);
    }
    for (const auto& [when, counts] : down) {
      std::cout << "cancel: due while down, " << when << ": " << counts.first << " delivered, "
                << counts.second << " not\n";
    }
  }

  // The last stats line comes after everything settled.
  std::map<std::string, int64_t> StopAndReadStats() {
    EXPECT_NO_FATAL_FAILURE(StopBridge());
    const std::map<std::string, int64_t> stats = LastStatsCounters(bridge_->Log());
    std::cout << "cancel: stats " << CancelCounters(stats) << "\n";
    return stats;
  }

  std::unique_ptr<DelayWorkload> workload_;
  std::unique_ptr<CancelPlan> plan_;
  std::unique_ptr<TestConsumer> reader_;
  std::vector<ProducedAt> landed_;        // by seq
  std::deque<ProducedAt> cancel_landed_;  // stable addresses for the delivery reports
  std::vector<TestRecord> deliveries_;    // target and alt topics
  std::vector<DeadLetter> dead_letters_;
  std::set<uint64_t> seen_;  // seqs delivered
  std::vector<MalformedCancel> malformed_;
  int64_t produced_ms_ = 0;
};

TEST_F(BridgeCancelTest, CancelledRecordsAreNeverDeliveredAndTheRestExactlyOnce) {
  ASSERT_NO_FATAL_FAILURE(SetUpRun(20261125));
  ASSERT_NO_FATAL_FAILURE(ProduceRecords());
  ASSERT_NO_FATAL_FAILURE(SendOddCancels());
  ASSERT_NO_FATAL_FAILURE(StepUntilSettled());

  const DeliveryCheck check = CheckDeliveries();
  EXPECT_TRUE(check.duplicates.empty()) << check.Summary();
  const CancelPlan::CounterCheck counters = plan_->CheckCounters(
      StopAndReadStats(), [this](uint64_t seq) { return seen_.contains(seq); },
      Shape::kCancelsOfCancels, malformed_.size());
  std::cout << "cancel: " << counters.summary << "\n";
  EXPECT_EQ(counters.mismatches, std::vector<std::string>()) << counters.summary;
  EXPECT_EQ(bridge_->CountInLog("ERROR"), 0u) << LogTail();
}

TEST_F(BridgeCancelTest, CancelsSurviveKillDashNine) {
  ASSERT_NO_FATAL_FAILURE(SetUpRun(20261126));
  ASSERT_NO_FATAL_FAILURE(ProduceRecords());
  ASSERT_NO_FATAL_FAILURE(SendOddCancels());
  // Late enough that every record was consumed and committed (no duplicate from consuming it
  // again), early enough that most are pending.
  while (NowMs() < produced_ms_ + 3'000) ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
  const auto [kill_ms, back_ms] = KillAndRestart();
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(StepUntilSettled());

  const DeliveryCheck check = CheckDeliveries();
  ShowCancelsDueWhileDown(kill_ms, back_ms);
  // As bridge_restart_test.cc: a duplicate's first copy went out shortly before the kill
  // (acknowledged but not checkpointed, or in flight). None was consumed in the last
  // group-commit window before it: no record was produced in the 3 s before it.
  constexpr int64_t kWindowMs = 2'000;
  for (const auto& [seq, extra] : check.duplicates) {
    int64_t first_ms = INT64_MAX;
    for (const TestRecord& r : deliveries_) {
      if (DelayWorkload::SeqOf(r) == seq) first_ms = std::min(first_ms, r.timestamp_ms);
    }
    EXPECT_LE(extra, 2u) << "seq " << seq;
    EXPECT_LE(first_ms, kill_ms) << "seq " << seq << " delivered twice after the restart";
    EXPECT_GE(first_ms, kill_ms - kWindowMs)
        << "seq " << seq << " first delivered " << kill_ms - first_ms << " ms before the kill";
  }
  StopAndReadStats();  // counted since the restart, so not compared
}

}  // namespace
}  // namespace delaybridge::testing
