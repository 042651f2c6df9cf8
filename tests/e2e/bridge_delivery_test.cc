// 100,000 delay-tagged records through the real bridge and the real broker: mixed delays of
// 0-30 s, both header styles (and both at once), x-target-topic routing, keyed and unkeyed
// records, extra headers. Every record must come out exactly once, never early, on the right
// topic, in the partition a Java producer would pick for its key, with key, value and headers
// intact. Prints the lateness p50/p99/max.
#include <signal.h>

#include <iostream>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kRecords = 100'000;
constexpr int64_t kMaxDelayMs = 30'000;
constexpr uint64_t kSeed = 20261122;
constexpr int kRecordsPerSecond = 5'000;

class BridgeDeliveryTest : public RealBrokerBridgeFixture {};

TEST_F(BridgeDeliveryTest, HundredThousandMixedDelaysExactlyOnceNeverEarly) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  SetUpBridge({.delay_partitions = 8, .target_partitions = 6, .alt_partitions = 3});
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  DelayWorkload workload(Spec(kSeed, kMaxDelayMs));
  const auto produce_start = std::chrono::steady_clock::now();
  // Paced at kRecordsPerSecond so the lateness measured is the bridge's timing, not the backlog
  // of a burst faster than a sanitizer build ingests (an unpaced 100k burst gave p99 ~7 s).
  for (int i = 0; i < kRecords; ++i) {
    const Status produced = producer_->Produce(workload.Next());
    ASSERT_TRUE(produced.ok()) << produced.ToString();
    if ((i + 1) % (kRecordsPerSecond / 10) == 0) {
      // Consume while pacing, so the consumer-side lateness is measured too.
      const auto due = produce_start + milliseconds((i + 1) * 1000LL / kRecordsPerSecond);
      ReceiveUntil([] { return false; }, std::chrono::duration_cast<milliseconds>(
                                             due - std::chrono::steady_clock::now()));
    }
  }
  const Status flushed = producer_->Flush(seconds(120));
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  std::cout << "produced " << kRecords << " records in "
            << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                        produce_start)
                   .count()
            << " ms\n";

  // The last deliver-at is at most 30 s away; the rest is catch-up headroom for a sanitizer
  // build on a busy machine.
  ReceiveUntil([&] { return DistinctIdsReceived() == workload.size() || !bridge_->running(); },
               milliseconds(kMaxDelayMs) + seconds(150));
  // Anything delivered twice would most likely show up right behind the first copy.
  ReceiveFor(seconds(3));
  ASSERT_TRUE(bridge_->running()) << "bridge died (log tail below)";

  const DeliveryReport report = CheckReceived(workload);
  std::cout << "delivery report: " << report.ToString() << "\n";
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u);
  RecordProperty("lateness_p50_ms", std::to_string(report.produce_lateness.p50_ms));
  RecordProperty("lateness_p99_ms", std::to_string(report.produce_lateness.p99_ms));
  RecordProperty("lateness_max_ms", std::to_string(report.produce_lateness.max_ms));
}

}  // namespace
}  // namespace delaybridge::testing
