// The broker goes away for 20 s while records are pending in the bridge and flowing through it
// (scripts/kafka.sh stop, then start on the same data dir and port). The bridge must ride it
// out: keep running, lose nothing, deliver nothing early, and catch up once the broker is back.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kSeed = 404;
constexpr int kPendingRecords = 4'000;  // produced before the outage, due during and after it
constexpr int64_t kPendingMaxDelayMs = 35'000;
constexpr int64_t kFlowMaxDelayMs = 5'000;  // the steady stream during the test
constexpr seconds kOutage(20);

class BridgeBrokerOutageTest : public RealBrokerBridgeFixture {};

TEST_F(BridgeBrokerOutageTest, BrokerDownTwentySecondsLosesNothingAndCatchesUp) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  // librdkafka's default session timeout (45 s): a 20 s outage is shorter, so the group keeps
  // its members. (With a 6 s session timeout the bridge loses its partitions during the outage
  // and re-delivers whatever was in flight when it gave them up.)
  SetUpBridge({.delay_partitions = 4,
               .target_partitions = 4,
               .alt_partitions = 2,
               .short_session_timeout = false});
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  DelayWorkload workload(Spec(kSeed, kPendingMaxDelayMs));
  for (int i = 0; i < kPendingRecords; ++i) {
    ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(60)).ok());

  // A steady stream of short delays from another producer, kept up through the outage
  // (librdkafka buffers it while the broker is away).
  auto feeder_producer = TestProducer::Create(cluster_->bootstrap());
  ASSERT_TRUE(feeder_producer.ok()) << feeder_producer.status().ToString();
  std::atomic<bool> stop_feeding{false};
  Status feed_status;
  std::mt19937_64 delays(kSeed);
  std::thread feeder([&] {
    while (!stop_feeding && feed_status.ok()) {
      for (int i = 0; i < 10 && feed_status.ok(); ++i) {
        feed_status = (*feeder_producer)
                          ->Produce(workload.NextWithDelay(
                              static_cast<int64_t>(delays() % kFlowMaxDelayMs), i % 2 == 0));
      }
      (*feeder_producer)->raw().poll(0);
      std::this_thread::sleep_for(milliseconds(50));
    }
  });

  ReceiveFor(seconds(4));  // records are being delivered now
  const size_t delivered_before = DistinctIdsReceived();
  const Status stopped = cluster_->SetBrokerDown(true);
  ASSERT_TRUE(stopped.ok()) << stopped.ToString();
  const auto outage_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(kOutage);
  EXPECT_TRUE(bridge_->running()) << "bridge died during the outage (log tail below)";
  const Status started = cluster_->SetBrokerDown(false);
  ASSERT_TRUE(started.ok()) << started.ToString();
  std::cout << "broker away for "
            << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                        outage_start)
                   .count()
            << " ms; " << delivered_before << " records delivered before it, " << workload.size()
            << " produced so far\n";

  ReceiveFor(seconds(5));  // the stream keeps flowing after the broker is back
  stop_feeding = true;
  feeder.join();
  ASSERT_TRUE(feed_status.ok()) << feed_status.ToString();
  const Status flushed = (*feeder_producer)->Flush(seconds(60));
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();

  ReceiveUntil([&] { return DistinctIdsReceived() == workload.size() || !bridge_->running(); },
               milliseconds(kPendingMaxDelayMs) + seconds(120));
  ReceiveFor(seconds(3));
  ASSERT_TRUE(bridge_->running()) << "bridge died (log tail below)";

  const DeliveryReport report = CheckReceived(workload);
  std::cout << "delivery report across a " << kOutage.count()
            << " s broker outage: " << report.ToString() << "\n";
  ExpectNoneLostEarlyOrAltered(report);
  // The bridge process never restarted, so its idempotent producer must not have duplicated.
  EXPECT_EQ(report.duplicates, 0u);
}

}  // namespace
}  // namespace delaybridge::testing
