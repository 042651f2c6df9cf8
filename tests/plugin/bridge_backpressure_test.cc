// Memory stays bounded when a backlog of overdue records arrives: with a tiny
// wheel.max_preloaded_records the bridge pauses consumption, resumes as deliveries drain, and
// still delivers every record exactly once. Under a steady stream whose lookahead would not fit
// the bound, it loads less far ahead instead of pausing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class BridgeBackpressureTest : public BridgeFixture {};

TEST_F(BridgeBackpressureTest, PausesAtTheMemoryBoundAndLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.max_preloaded_records = 100}));
  const uint32_t seed = 5;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 500));
  // The backlog is there before the bridge starts: all of it is due at once.
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 3000));
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

// 250 records a second due 4-10 s later: holding every record due within preload_seconds (5)
// would take about 1,300 records, more than the bound of 1,000. The seconds further ahead than
// the next one wait on disk instead, and consumption never pauses.
TEST_F(BridgeBackpressureTest, LoadsLessFarAheadInsteadOfPausingUnderASteadyStream) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.max_preloaded_records = 1000}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 6;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 10'000, 4'000));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3000; ++i) {
    if (i % 25 == 0) std::this_thread::sleep_until(start + milliseconds(i * 4));
    ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());

  const bool all = ReceiveWorkload(workload, seconds(90), seconds(1));
  const DeliveryReport report = CheckReceived(workload);
  EXPECT_TRUE(all) << report.ToString();
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  EXPECT_EQ(bridge_->CountInLog("pausing consumption"), 0u) << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
