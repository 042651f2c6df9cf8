#include "tests/support/bridge_cancel_fixture.h"

#include <iostream>

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kExactlyOnceYaml[] = "delivery:\n  guarantee: exactly_once\n";

}  // namespace

void BridgeCancelFixture::RunWithoutCrash(const CancelRun& run) {
  ASSERT_NO_FATAL_FAILURE(SetUpRun(run));
  ASSERT_NO_FATAL_FAILURE(ProduceRecords());
  ASSERT_NO_FATAL_FAILURE(SendOddCancels());
  ASSERT_NO_FATAL_FAILURE(StepUntilSettled());
  const DeliveryReport report = CheckDeliveries(/*dead_letters_once=*/true);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  const CancelPlan::CounterCheck counters = plan_->CheckCounters(
      StopAndReadStats(), [this](uint64_t id) { return Seen(id); }, CancelShape::kCancelsOfCancels,
      malformed_.size());
  std::cout << "cancel: " << counters.summary << "\n";
  EXPECT_EQ(counters.mismatches, std::vector<std::string>()) << counters.summary;
}

void BridgeCancelFixture::RunWithKill(const CancelRun& run) {
  ASSERT_NO_FATAL_FAILURE(SetUpRun(run));
  ASSERT_NO_FATAL_FAILURE(ProduceRecords());
  ASSERT_NO_FATAL_FAILURE(SendOddCancels());
  // Late enough that every record was consumed and committed (no duplicate from consuming it
  // again), early enough that most are pending.
  while (NowMs() < produced_ms_ + 3'000) ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
  const auto [kill_ms, back_ms] = KillAndRestart();
  ASSERT_FALSE(HasFailure());
  ASSERT_NO_FATAL_FAILURE(StepUntilSettled());

  const DeliveryReport report = CheckDeliveries(/*dead_letters_once=*/run.exactly_once);
  ShowCancelsDueWhileDown(kill_ms, back_ms);
  if (run.exactly_once) {
    EXPECT_EQ(report.duplicates, 0u) << "a read_committed reader saw a record twice";
  }
  // At most: delivered before the kill, reloaded, consumed again.
  for (const auto& [id, copies] : report.duplicated) EXPECT_LE(copies.size(), 3u) << "id " << id;
  ExpectDuplicatesOnlyAround(report, kill_ms, run.duplicate_window_ms);
  StopAndReadStats();  // counted since the restart, so not compared
}

void BridgeCancelFixture::SetUpRun(const CancelRun& run) {
  std::cout << "cancel test seed " << run.seed << "\n";
  BridgeTestOptions options = run.options;
  if (run.exactly_once) options.extra_yaml += kExactlyOnceYaml;
  ASSERT_NO_FATAL_FAILURE(SetUpBridge(options));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  workload_ = std::make_unique<DelayWorkload>(
      Spec(run.seed, CancelShape::kMaxDelayMs, CancelShape::kMinDelayMs));
  plan_ = std::make_unique<CancelPlan>(run.seed, CancelShape::kInTimeFraction,
                                       CancelShape::kLateFraction);
}

void BridgeCancelFixture::ProduceRecords() {
  landed_.resize(CancelShape::kBatches * CancelShape::kRecordsPerBatch);
  for (int batch = 0; batch < CancelShape::kBatches; ++batch) {
    const int64_t first = static_cast<int64_t>(workload_->size());
    for (int i = 0; i < CancelShape::kRecordsPerBatch; ++i) {
      const TestRecord record = workload_->Next();
      ASSERT_TRUE(producer_->Produce(record, &landed_[*WorkloadId(record)]).ok());
    }
    const Status flushed = producer_->Flush(seconds(30));
    ASSERT_TRUE(flushed.ok()) << flushed.ToString();
    const int64_t acked_ms = NowMs();
    for (int64_t id = first; id < static_cast<int64_t>(workload_->size()); ++id) {
      workload_->SetSource(id, landed_[id].partition, landed_[id].offset);
      plan_->Consider(id, acked_ms, workload_->DeliverAtMs(id));
    }
    ASSERT_NO_FATAL_FAILURE(Step(CancelShape::kBatchPause));
  }
  produced_ms_ = NowMs();
}

void BridgeCancelFixture::SendOddCancels() {
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());  // the cancels so far have offsets
  const std::vector<ProducedAt> cancels =
      FirstAcknowledged(cancel_landed_, CancelShape::kCancelsOfCancels);
  ASSERT_EQ(cancels.size(), CancelShape::kCancelsOfCancels) << "too few cancels sent yet";
  // The bridge knows no record there: unknown.
  for (const ProducedAt& cancel : cancels) {
    const std::string id = RecordId(delay_topic_, cancel.partition, cancel.offset);
    ASSERT_NO_FATAL_FAILURE(SendCancel(cancel.partition, id, "of a cancel"));
  }
  malformed_ = MalformedCancels(delay_topic_, 1, target_topic_);
  for (const MalformedCancel& bad : malformed_) {
    ASSERT_NO_FATAL_FAILURE(SendCancel(1, bad.id, bad.name));
  }
}

void BridgeCancelFixture::Step(milliseconds poll) {
  for (const uint64_t id : plan_->TakeDue(NowMs())) {
    ASSERT_NO_FATAL_FAILURE(SendCancelOf(id, "of "));
  }
  ReceiveFor(poll);
  for (; looked_at_ < received_.size(); ++looked_at_) {
    const TestRecord& record = received_[looked_at_];
    if (record.topic == dlq_topic_) continue;
    const std::optional<int64_t> id = WorkloadId(record);
    if (id && seen_.insert(*id).second && plan_->TakeLate(*id, NowMs())) {
      ASSERT_NO_FATAL_FAILURE(SendCancelOf(*id, "late of "));
    }
  }
}

void BridgeCancelFixture::SendCancelOf(uint64_t id, const std::string& tag) {
  const ProducedAt& target = landed_.at(id);
  SendCancel(target.partition, RecordId(delay_topic_, target.partition, target.offset),
             tag + std::to_string(id));
}

void BridgeCancelFixture::SendCancel(int32_t partition, std::optional<std::string> id,
                                     const std::string& tag) {
  TestRecord cancel;
  cancel.topic = delay_topic_;
  cancel.partition = partition;
  cancel.value = "cancel " + tag;
  cancel.headers = {{kCancelHeader, std::move(id)}, {"cancel", tag}};
  const Status produced = producer_->Produce(cancel, &cancel_landed_.emplace_back());
  ASSERT_TRUE(produced.ok()) << produced.ToString();
}

void BridgeCancelFixture::StepUntilSettled() {
  const auto deadline =
      std::chrono::steady_clock::now() + milliseconds(CancelShape::kMaxDelayMs) + seconds(90);
  while (!plan_->Done(workload_->size(), [this](uint64_t id) { return Seen(id); }) &&
         std::chrono::steady_clock::now() < deadline) {
    ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  for (int i = 0; i < 30; ++i) ASSERT_NO_FATAL_FAILURE(Step(milliseconds(100)));
}

std::pair<int64_t, int64_t> BridgeCancelFixture::KillAndRestart() {
  const int64_t kill_ms = NowMs();
  const size_t sent = plan_->in_time_sent();
  bridge_->Kill();
  StartBridge([this] { Step(milliseconds(100)); });
  const int64_t back_ms = NowMs();
  std::cout << "cancel: killed at " << kill_ms << " with " << sent << " cancels sent, "
            << seen_.size() << " records delivered; back after " << back_ms - kill_ms << " ms\n";
  return {kill_ms, back_ms};
}

DeliveryReport BridgeCancelFixture::CheckDeliveries(bool dead_letters_once) {
  plan_->ForEachCancelledInTime(
      [this](uint64_t id, bool certain) { workload_->Cancel(static_cast<int64_t>(id), certain); });
  std::vector<TestRecord> delivered;
  std::vector<DeadLetter> letters;
  for (const TestRecord& r : received_) {
    if (r.topic != dlq_topic_) {
      delivered.push_back(r);
      continue;
    }
    letters.push_back(
        {r.value, r.Header("cancel"), r.Header(kCancelHeader), r.Header("x-delay-error")});
  }
  const DeliveryReport report = workload_->CheckDeliveries(delivered, TargetPartitions());
  std::cout << "cancel: " << workload_->size() << " records, " << plan_->in_time_sent()
            << " cancelled in time (" << plan_->certain() << " certainly), " << plan_->late_sent()
            << " too late, " << CancelShape::kCancelsOfCancels << " of cancels, "
            << malformed_.size() << " malformed: " << report.ToString() << "\n";
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(plan_->unsent() + plan_->late_unsent(), 0u) << "cancels left unsent";
  EXPECT_EQ(CheckDeadLetteredCancels(malformed_, letters, dead_letters_once),
            std::vector<std::string>());
  return report;
}

void BridgeCancelFixture::ShowCancelsDueWhileDown(int64_t kill_ms, int64_t back_ms) const {
  std::map<std::string, std::pair<size_t, size_t>> down;  // sent -> delivered, not
  for (int64_t id = 0; id < static_cast<int64_t>(workload_->size()); ++id) {
    const std::optional<int64_t> sent_ms = plan_->CancelSentMs(id);
    const int64_t deliver_at_ms = workload_->DeliverAtMs(id);
    if (!sent_ms || deliver_at_ms < kill_ms || deliver_at_ms > back_ms) continue;
    const std::string when = *sent_ms < kill_ms - CancelPlan::kCertainLeadMs
                                 ? "sent well before the kill"
                             : *sent_ms < kill_ms ? "sent just before the kill"
                                                  : "sent while down";
    ++(seen_.contains(id) ? down[when].first : down[when].second);
  }
  for (const auto& [when, counts] : down) {
    std::cout << "cancel: due while down, " << when << ": " << counts.first << " delivered, "
              << counts.second << " not\n";
  }
}

std::map<std::string, int64_t> BridgeCancelFixture::StopAndReadStats() {
  EXPECT_NO_FATAL_FAILURE(StopBridge());
  const std::map<std::string, int64_t> stats = LastStatsCounters(bridge_->Log());
  std::cout << "cancel: stats " << CancelCounters(stats) << "\n";
  return stats;
}

}  // namespace delaybridge::testing
