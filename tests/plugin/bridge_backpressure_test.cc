// Memory stays bounded when a backlog of overdue records arrives: with a tiny
// wheel.max_preloaded_records the bridge pauses consumption, resumes as deliveries drain, and
// still delivers every record exactly once. Under a steady stream whose lookahead would not fit
// the bound, it loads less far ahead instead of pausing, and a second holding more than half the
// bound is loaded just in time.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

class BridgeBackpressureTest : public BridgeFixture {
 protected:
  // Produces `records` records of spec at per_second, in bursts every 40 ms, then expects each
  // delivered once, none early, and consumption never paused.
  void StreamWithoutPausing(const WorkloadSpec& spec, int records, int per_second) {
    DelayWorkload workload(spec);
    const int burst = per_second / 25;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < records; ++i) {
      if (i % burst == 0) {
        std::this_thread::sleep_until(start + microseconds(int64_t{i} * 1'000'000 / per_second));
      }
      ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());

    const bool all = ReceiveWorkload(workload, seconds(90), seconds(1));
    const DeliveryReport report = CheckReceived(workload);
    EXPECT_TRUE(all) << report.ToString();
    ExpectNoneLostEarlyOrAltered(report);
    EXPECT_EQ(report.duplicates, 0u) << report.ToString();
    EXPECT_EQ(bridge_->CountInLog("pausing consumption"), 0u) << LogTail();
  }
};

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
  ASSERT_NO_FATAL_FAILURE(StreamWithoutPausing(Spec(seed, 10'000, 4'000), 3000, 250));
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

// 550 records a second, each due 6-7 s later: one second's records are more than half of the
// bound of 1,000, so this second's and the next one's together do not fit. The next second is
// loaded only once it fits beside what is left of this one, or half a second before it falls
// due: memory peaks near 825, under the bound, and consumption never pauses. (The delays lie beyond
// preload_seconds, 5, so that no record goes to memory as it is stored: at the start every
// second of the lookahead is empty, and so already walked.)
TEST_F(BridgeBackpressureTest, LoadsTheNextSecondWhenItFitsWhenOneSecondIsOverHalfTheBound) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.max_preloaded_records = 1000}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 7;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  ASSERT_NO_FATAL_FAILURE(StreamWithoutPausing(Spec(seed, 7'000, 6'000), 4400, 550));
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
