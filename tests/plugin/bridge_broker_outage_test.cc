// The broker goes away while records are due: the bridge neither crashes nor drops anything,
// and delivers everything, late, once the broker is back.
#include <gtest/gtest.h>

#include <thread>

#include "tests/plugin/bridge_test_env.h"
#include "tests/plugin/delay_workload.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BridgeBrokerOutageTest : public BridgeTestEnv {};

TEST_F(BridgeBrokerOutageTest, DeliversEverythingAfterTheBrokerReturns) {
  ASSERT_NO_FATAL_FAILURE(Prepare(BridgeTestOptions{}));
  if (cluster_->external()) GTEST_SKIP() << "outages are simulated with the mock cluster only";
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 99;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(seed, delay_topic_, target_topic_, alt_topic_, options_.target_partitions);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(producer_->Produce(workload.Next(NowMs(), 8000)).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  // Let the bridge consume them, then take the broker away while about half fall due.
  std::this_thread::sleep_for(seconds(2));
  ASSERT_TRUE(cluster_->SetBrokerDown(true).ok());
  std::this_thread::sleep_for(seconds(4));
  EXPECT_TRUE(bridge_->running()) << LogTail();
  ASSERT_TRUE(cluster_->SetBrokerDown(false).ok());

  bool all = false;
  const std::vector<TestRecord> delivered =
      CollectDeliveries(workload, 1000, std::chrono::seconds(90), std::chrono::seconds(1), &all);
  const DeliveryCheck check = workload.Check(delivered);
  std::cout << "outage: " << check.Summary() << "\n";
  EXPECT_TRUE(all) << check.Summary();
  EXPECT_TRUE(check.missing.empty()) << check.Summary();
  EXPECT_TRUE(check.errors.empty()) << check.Summary();
  EXPECT_TRUE(check.duplicates.empty()) << check.Summary();
  EXPECT_TRUE(bridge_->running());
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
