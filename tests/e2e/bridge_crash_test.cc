// SIGKILL the bridge at random moments while records flow in and out, restart it, five times:
// nothing may be lost, and every duplicate must be one the documented bound allows: a record
// whose first copy was produced shortly before a crash, when the delivered-position checkpoint
// could not yet cover it (docs/bridge.md).
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "tests/e2e/bridge_test_base.h"

namespace delaybridge::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kSeed = 5150;
constexpr int kKills = 5;
constexpr int64_t kMaxDelayMs = 8'000;
constexpr int kRecordsPerBatch = 40;
constexpr milliseconds kBatchPause(25);  // about 1,600 records/s offered
// Slack on top of the checkpoint interval for a produce to be acknowledged and the
// acknowledgement to reach the checkpoint under a sanitizer build.
constexpr int64_t kAckSlackMs = 2'000;

class BridgeCrashTest : public BridgeTestBase {};

TEST_F(BridgeCrashTest, SigkillUnderLoadFiveTimesLosesNothing) {
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  SetUpBridge({.delay_partitions = 4, .target_partitions = 4, .alt_partitions = 2});
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  DelayWorkload workload(Spec(kSeed, kMaxDelayMs));
  auto feeder_producer = TestProducer::Create(bootstrap_);
  ASSERT_TRUE(feeder_producer.ok()) << feeder_producer.status().ToString();
  std::atomic<bool> stop_feeding{false};
  Status feed_status;
  std::thread feeder([&] {
    while (!stop_feeding && feed_status.ok()) {
      for (int i = 0; i < kRecordsPerBatch && feed_status.ok(); ++i) {
        feed_status = (*feeder_producer)->Produce(workload.Next());
      }
      (*feeder_producer)->raw().poll(0);
      std::this_thread::sleep_for(kBatchPause);
    }
  });

  std::mt19937_64 rng(kSeed);
  std::vector<int64_t> kill_ms;
  for (int k = 0; k < kKills; ++k) {
    ReceiveFor(milliseconds(1000 + rng() % 3000));
    kill_ms.push_back(NowMs());
    Result<int> killed = bridge_->Stop(SIGKILL, seconds(10));
    ASSERT_TRUE(killed.ok()) << killed.status().ToString();
    EXPECT_TRUE(WIFSIGNALED(*killed)) << DescribeWaitStatus(*killed);
    std::cout << "kill " << k + 1 << " at " << kill_ms.back() << " with " << workload.size()
              << " records produced, " << DistinctIdsReceived() << " delivered\n";
    StartBridgeAndWaitReady();
    ASSERT_FALSE(HasFatalFailure()) << "restart " << k + 1;
  }
  ReceiveFor(seconds(2));
  stop_feeding = true;
  feeder.join();
  ASSERT_TRUE(feed_status.ok()) << feed_status.ToString();
  const Status flushed = (*feeder_producer)->Flush(seconds(60));
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();

  ReceiveUntil([&] { return DistinctIdsReceived() == workload.size() || !bridge_->Running(); },
               milliseconds(kMaxDelayMs) + seconds(120));
  ReceiveFor(seconds(3));
  ASSERT_TRUE(bridge_->Running()) << "bridge died: " << bridge_->DescribeExit();

  const DeliveryReport report = workload.CheckDeliveries(received_, TargetPartitions());
  std::cout << "delivery report after " << kKills << " SIGKILLs: " << report.ToString() << "\n";
  EXPECT_EQ(report.missing(), 0u);
  EXPECT_EQ(report.early, 0u);
  EXPECT_EQ(report.wrong_topic, 0u);
  EXPECT_EQ(report.wrong_partition, 0u);
  EXPECT_EQ(report.wrong_content, 0u);
  EXPECT_EQ(report.unknown, 0u);

  // The bound: a duplicate's first copy was produced in the window before some crash in which
  // the checkpoint could not yet have recorded it.
  const int64_t window_ms = kCheckpointIntervalMs + kAckSlackMs;
  size_t outside_bound = 0;
  for (const auto& [id, copies] : report.duplicated) {
    int64_t first_ms = copies.front().timestamp_ms;
    for (const ConsumedRecord& copy : copies) first_ms = std::min(first_ms, copy.timestamp_ms);
    bool explained = false;
    for (int64_t crash_ms : kill_ms) {
      explained = explained || (first_ms <= crash_ms && first_ms >= crash_ms - window_ms);
    }
    if (!explained) {
      ++outside_bound;
      if (outside_bound <= 10) {
        ADD_FAILURE() << "id " << id << " delivered " << copies.size() << " times; first copy at "
                      << first_ms << " is not within " << window_ms << " ms before a crash";
      }
    }
  }
  std::cout << "duplicates: " << report.duplicates << " copies of " << report.duplicated.size()
            << " records, " << outside_bound << " outside the bound (window " << window_ms
            << " ms before each of " << kKills << " crashes)\n";
  RecordProperty("duplicates", std::to_string(report.duplicates));
  RecordProperty("records", std::to_string(report.expected));
}

}  // namespace
}  // namespace delaybridge::e2e
