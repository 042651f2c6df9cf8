// The broker goes away while records are due: the bridge neither crashes nor drops anything,
// and delivers everything, late, once the broker is back.
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BridgeBrokerOutageTest : public BridgeFixture {};

TEST_F(BridgeBrokerOutageTest, DeliversEverythingAfterTheBrokerReturns) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({}));
  if (cluster_->external()) GTEST_SKIP() << "outages are simulated with the mock cluster only";
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 99;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 8000));
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 1000));
  // Let the bridge consume them, then take the broker away while about half fall due.
  std::this_thread::sleep_for(seconds(2));
  ASSERT_TRUE(cluster_->SetBrokerDown(true).ok());
  std::this_thread::sleep_for(seconds(4));
  EXPECT_TRUE(bridge_->running()) << LogTail();
  ASSERT_TRUE(cluster_->SetBrokerDown(false).ok());

  const bool all = ReceiveWorkload(workload, seconds(90), seconds(1));
  const DeliveryReport report = CheckReceived(workload);
  std::cout << "outage: " << report.ToString() << "\n";
  EXPECT_TRUE(all) << report.ToString();
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  EXPECT_TRUE(bridge_->running());
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
