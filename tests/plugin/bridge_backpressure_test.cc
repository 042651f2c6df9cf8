// Memory stays bounded when a backlog of overdue records arrives: with a tiny
// wheel.max_preloaded_records the bridge pauses consumption, resumes as deliveries drain, and
// still delivers every record exactly once.
#include <gtest/gtest.h>

#include "tests/plugin/bridge_test_env.h"
#include "tests/plugin/delay_workload.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BridgeBackpressureTest : public BridgeTestEnv {};

TEST_F(BridgeBackpressureTest, PausesAtTheMemoryBoundAndLosesNothing) {
  BridgeTestOptions options;
  options.max_preloaded_records = 100;
  ASSERT_NO_FATAL_FAILURE(Prepare(options));
  const uint32_t seed = 5;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(seed, delay_topic_, target_topic_, alt_topic_, options_.target_partitions);
  // The backlog is there before the bridge starts: all of it is due at once.
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(producer_->Produce(workload.Next(NowMs(), 500)).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  bool all = false;
  const std::vector<TestRecord> delivered =
      CollectDeliveries(workload, 3000, std::chrono::seconds(90), std::chrono::seconds(1), &all);
  const DeliveryCheck check = workload.Check(delivered);
  EXPECT_TRUE(all) << check.Summary();
  EXPECT_TRUE(check.missing.empty()) << check.Summary();
  EXPECT_TRUE(check.duplicates.empty()) << check.Summary();
  EXPECT_TRUE(check.errors.empty()) << check.Summary();
  EXPECT_GE(bridge_->CountInLog("INFO  pausing consumption"), 1u) << LogTail();
  EXPECT_GE(bridge_->CountInLog("INFO  resuming consumption"), 1u) << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
