// Cancels (x-delay-cancel) against the real broker, at least once and exactly once: 10,000
// records due 5-30 s ahead; a seeded 30% cancelled at random moments before they fall due (each
// cancel produced to its target's partition, naming the offset the produce acknowledgement
// gave), a few hundred more once their delivery was seen (too late), cancels naming cancel
// records (unknown) and malformed cancels (dead-lettered with the reason). No cancelled record
// comes out, every other one does, once, never early and intact, and the stats line counts
// cancelled, cancel_too_late and cancel_unknown exactly. Then the same with a kill -9 while most
// records are pending: cancels survive it; duplicates only as a crash allows (none exactly once).
#include <deque>
#include <iostream>
#include <set>

#include "tests/e2e/bridge_cluster_fixture.h"
#include "tests/support/cancel_plan.h"

namespace delaybridge::e2e {
namespace {

using testing::CancelPlan;
using testing::kCancelHeader;
using testing::MalformedCancel;
using testing::ProducedAt;
using testing::RecordId;

using Shape = testing::CancelTestShape;
constexpr char kExactlyOnce[] = "delivery:\n  guarantee: exactly_once\n";

class BridgeCancelTest : public BridgeClusterFixture {
 protected:
  void SetUpRun(uint64_t seed, bool exactly_once) {
    std::cout << "cancel test seed " << seed << "\n";
    exactly_once_ = exactly_once;
    SetUpBridge(ClusterTopology(), exactly_once ? kExactlyOnce : "");
    ASSERT_FALSE(HasFatalFailure());
    StartBridgeAndWaitReady();
    ASSERT_FALSE(HasFatalFailure());
    WorkloadSpec spec = Spec(seed, Shape::kMaxDelayMs);
    spec.min_delay_ms = Shape::kMinDelayMs;
    workload_ = std::make_unique<DelayWorkload>(spec);
    plan_ = std::make_unique<CancelPlan>(seed, Shape::kInTimeFraction, Shape::kLateFraction);
  }

  // Produces the records in batches, each flushed to learn where its records landed (what their
  // cancels name), and plans their cancels; the cancels due go out between batches.
  void ProduceRecords() {
    landed_.resize(Shape::kBatches * Shape::kRecordsPerBatch);
    for (int batch = 0; batch < Shape::kBatches; ++batch) {
      const int64_t first = static_cast<int64_t>(workload_->size());
      for (int i = 0; i < Shape::kRecordsPerBatch; ++i) {
        const OutgoingRecord record = workload_->Next();
        ASSERT_TRUE(producer_->Produce(record, &landed_[*WorkloadId(record.value)]).ok());
      }
      const Status flushed = producer_->Flush(seconds(30));
      ASSERT_TRUE(flushed.ok()) << flushed.ToString();
      const int64_t acked_ms = NowMs();
      for (int64_t id = first; id < static_cast<int64_t>(workload_->size()); ++id) {
        workload_->SetSource(id, landed_[id].partition, landed_[id].offset);
        plan_->Consider(id, acked_ms, workload_->DeliverAtMs(id));
      }
      ASSERT_NO_FATAL_FAILURE(Step(Shape::kBatchPause));
    }
    produced_ms_ = NowMs();
  }

  void Step(milliseconds poll) {
    SendDueCancels();
    ReceiveFor(poll);
    CancelLateOnesReceived();
  }

  void SendDueCancels() {
    for (const uint64_t id : plan_->TakeDue(NowMs())) SendCancelOf(id, "of ");
  }

  // Looks at what arrived since the last call: the ids delivered, and a cancel for each one
  // planned to be cancelled late.
  void CancelLateOnesReceived() {
    for (; looked_at_ < received_.size(); ++looked_at_) {
      const ConsumedRecord& record = received_[looked_at_];
      if (record.topic == dlq_topic_) continue;
      const std::optional<int64_t> id = WorkloadId(record.value);
      if (id && seen_.insert(*id).second && plan_->TakeLate(*id, NowMs())) {
        SendCancelOf(*id, "late of ");
      }
    }
  }

  void SendCancelOf(uint64_t id, const std::string& tag) {
    const ProducedAt& target = landed_.at(id);
    SendCancel(target.partition, RecordId(delay_topic_, target.partition, target.offset),
               tag + std::to_string(id));
  }

  void SendCancel(int32_t partition, std::optional<std::string> id, const std::string& tag) {
    OutgoingRecord cancel;
    cancel.topic = delay_topic_;
    cancel.partition = partition;
    cancel.value = "cancel " + tag;
    cancel.headers = {{kCancelHeader, std::move(id)}, {"cancel", tag}};
    const Status produced = producer_->Produce(cancel, &cancel_landed_.emplace_back());
    EXPECT_TRUE(produced.ok()) << produced.ToString();
  }

  // Cancels naming cancel records (the bridge knows no record there: unknown), then malformed
  // ones (dead-lettered) to partition 1.
  void SendOddCancels() {
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());  // the cancels so far have offsets
    const auto targets = testing::FirstAcknowledged(cancel_landed_, Shape::kCancelsOfCancels);
    ASSERT_EQ(targets.size(), Shape::kCancelsOfCancels) << "too few cancels sent yet";
    for (const ProducedAt& at : targets) {
      SendCancel(at.partition, RecordId(delay_topic_, at.partition, at.offset), "of a cancel");
    }
    malformed_ = testing::MalformedCancels(delay_topic_, 1, target_topic_);
    for (const MalformedCancel& bad : malformed_) SendCancel(1, bad.id, bad.name);
  }

  // Until every cancel went out and every record not cancelled in time arrived (or the
  // deadline); then 3 s more, so that a late or duplicate delivery shows up.
  void StepUntilSettled() {
    const auto deadline =
        std::chrono::steady_clock::now() + milliseconds(Shape::kMaxDelayMs) + seconds(90);
    while (std::chrono::steady_clock::now() < deadline &&
           !plan_->Done(workload_->size(),
                        [this](uint64_t id) { return seen_.contains(static_cast<int64_t>(id)); })) {
      ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
    ReceiveFor(seconds(3));
    CancelLateOnesReceived();
  }

  // Marks the cancelled records in the workload, then checks what the target topics got, and
  // the dead letters: each malformed cancel once (at least once after a crash, at least once).
  DeliveryReport CheckDeliveries(bool crashed) {
    plan_->ForEachCancelledInTime([this](uint64_t id, bool certain) {
      workload_->Cancel(static_cast<int64_t>(id), certain);
    });
    std::vector<ConsumedRecord> delivered;
    std::vector<testing::DeadLetter> letters;
    for (const ConsumedRecord& r : received_) {
      if (r.topic != dlq_topic_) {
        delivered.push_back(r);
        continue;
      }
      letters.push_back({r.value, HeaderValue(r.headers, "cancel"),
                         HeaderValue(r.headers, kCancelHeader),
                         HeaderValue(r.headers, "x-delay-error")});
    }
    const DeliveryReport report = workload_->CheckDeliveries(delivered, TargetPartitions());
    std::cout << "cancel: " << plan_->in_time_sent() << " cancelled in time (" << plan_->certain()
              << " certain to be), " << plan_->late_sent() << " too late, "
              << Shape::kCancelsOfCancels << " of cancels, " << malformed_.size() << " malformed; "
              << report.ToString() << "\n";
    ExpectNoneLostEarlyOrAltered(report);
    EXPECT_EQ(report.delivered_though_cancelled, 0u) << report.ToString();
    EXPECT_EQ(plan_->unsent() + plan_->late_unsent(), 0u) << "cancels left unsent";
    EXPECT_TRUE(!exactly_once_ || report.duplicates == 0) << "a read_committed reader saw twice";
    EXPECT_EQ(testing::CheckDeadLetteredCancels(malformed_, letters, exactly_once_ || !crashed),
              std::vector<std::string>());
    return report;
  }

  // Stops the bridge (SIGTERM, exit 0): its last stats line comes after everything settled.
  std::map<std::string, int64_t> StopAndReadStats() {
    Result<int> code = bridge_->Terminate(seconds(60));
    EXPECT_TRUE(code.ok()) << code.status().ToString();
    EXPECT_EQ(code.ok() ? *code : -1, 0) << "exit code after SIGTERM";
    const std::map<std::string, int64_t> stats = testing::LastStatsCounters(bridge_->Log());
    std::cout << "cancel: stats " << testing::CancelCounters(stats) << "\n";
    return stats;
  }

  void RunWithoutCrash(uint64_t seed, bool exactly_once) {
    ASSERT_NO_FATAL_FAILURE(SetUpRun(seed, exactly_once));
    ASSERT_NO_FATAL_FAILURE(ProduceRecords());
    ASSERT_NO_FATAL_FAILURE(SendOddCancels());
    ASSERT_NO_FATAL_FAILURE(StepUntilSettled());
    EXPECT_EQ(CheckDeliveries(false).duplicates, 0u);
    const CancelPlan::CounterCheck counters = plan_->CheckCounters(
        StopAndReadStats(),
        [this](uint64_t id) { return seen_.contains(static_cast<int64_t>(id)); },
        Shape::kCancelsOfCancels, malformed_.size());
    std::cout << "cancel: " << counters.summary << "\n";
    EXPECT_EQ(counters.mismatches, std::vector<std::string>()) << counters.summary;
  }

  void RunWithKill(uint64_t seed, bool exactly_once) {
    ASSERT_NO_FATAL_FAILURE(SetUpRun(seed, exactly_once));
    ASSERT_NO_FATAL_FAILURE(ProduceRecords());
    ASSERT_NO_FATAL_FAILURE(SendOddCancels());
    // Late enough that every record was consumed and committed before the kill (no duplicate
    // from re-consumption), early enough that most are pending.
    while (NowMs() < produced_ms_ + 3'000) ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
    const int64_t kill_ms = NowMs();
    const size_t sent = plan_->in_time_sent();
    bridge_->Kill();
    // Cancels keep going out while it restarts.
    StartBridgeAndWaitReady(seconds(120), [this] {
      SendDueCancels();
      CancelLateOnesReceived();
    });
    ASSERT_FALSE(HasFatalFailure());
    const int64_t back_ms = NowMs();
    std::cout << "cancel: killed at " << kill_ms << " with " << sent << " cancels sent, "
              << seen_.size() << " records delivered; back after " << back_ms - kill_ms << " ms\n";
    ASSERT_NO_FATAL_FAILURE(StepUntilSettled());
    ExpectDuplicatesOnlyAround(CheckDeliveries(true), kill_ms);
    StopAndReadStats();  // counted since the restart, so not compared
  }

  bool exactly_once_ = false;
  std::unique_ptr<DelayWorkload> workload_;
  std::unique_ptr<CancelPlan> plan_;
  std::vector<ProducedAt> landed_;        // by workload id
  std::deque<ProducedAt> cancel_landed_;  // stable addresses for the delivery reports
  std::set<int64_t> seen_;                // workload ids delivered
  size_t looked_at_ = 0;                  // received_ up to here was looked at
  std::vector<MalformedCancel> malformed_;
  int64_t produced_ms_ = 0;
};

TEST_F(BridgeCancelTest, AtLeastOnceCancelledNeverDeliveredOthersOnceCountersMatch) {
  RunWithoutCrash(20261127, false);
}

TEST_F(BridgeCancelTest, AtLeastOnceCancelsSurviveKillDashNine) { RunWithKill(20261128, false); }

// A read_committed reader (the collector: librdkafka's default isolation level).
TEST_F(BridgeCancelTest, ExactlyOnceCancelledNeverDeliveredOthersOnceCountersMatch) {
  RunWithoutCrash(20261129, true);
}

TEST_F(BridgeCancelTest, ExactlyOnceCancelsSurviveKillDashNine) { RunWithKill(20261130, true); }

}  // namespace
}  // namespace delaybridge::e2e
