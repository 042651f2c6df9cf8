// Memory stays bounded when a backlog of overdue records arrives: with a tiny
// wheel.max_preloaded_records the bridge pauses consumption, resumes as deliveries drain, and
// still delivers every record exactly once.
#include <gtest/gtest.h>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BridgeBackpressureTest : public BridgeFixture {};

TEST_F(BridgeBackpressureTest, PausesAtTheMemoryBoundAndLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.max_preloaded_records = 100}));
  const uint32_t seed = 5;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 500));
  // The backlog is there before the bridge starts: all of it is due at once.
  for (int i = 0; i < 3000; ++i) ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  const bool all = ReceiveWorkload(workload, seconds(90), seconds(1));
  const DeliveryReport report = CheckReceived(workload);
  EXPECT_TRUE(all) << report.ToString();
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  EXPECT_GE(bridge_->CountInLog("INFO  pausing consumption"), 1u) << LogTail();
  EXPECT_GE(bridge_->CountInLog("INFO  resuming consumption"), 1u) << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
