// ClockStepWatch: a step back under a second is the clock's ordinary jitter and passes quietly;
// a larger one is counted and logged with what it means for the checkpoints; one of 30 s or
// more is an error (librdkafka's threads would stall for as long).
#include "plugin/clock_step_watch.h"

#include <gtest/gtest.h>

#include "tests/plugin/log_capture.h"

namespace delaybridge::plugin {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

TEST(ClockStepWatchTest, StepsBackUnderASecondPassQuietly) {
  LogCapture log("clock_step_watch_test");
  ClockStepWatch watch(log.logger(), false);
  EXPECT_TRUE(watch.Notice(kNow).ok());
  EXPECT_TRUE(watch.Notice(kNow - 999).ok());
  EXPECT_TRUE(watch.Notice(kNow + 60'000).ok()) << "forward is no step back";
  EXPECT_EQ(watch.steps_back(), 0u);
  EXPECT_EQ(log.Text(), "");
}

TEST(ClockStepWatchTest, AStepBackOfASecondOrMoreIsCountedAndExplained) {
  LogCapture log("clock_step_watch_test");
  ClockStepWatch watch(log.logger(), false);
  ASSERT_TRUE(watch.Notice(kNow).ok());
  EXPECT_TRUE(watch.Notice(kNow - kClockStepMs).ok());
  EXPECT_EQ(watch.steps_back(), 1u);
  EXPECT_NE(log.Text().find("stepped back by 1000 ms: " + CheckpointAheadConsequence(false)),
            std::string::npos)
      << log.Text();
}

TEST(ClockStepWatchTest, AStepBackOfThirtySecondsIsAnError) {
  LogCapture log("clock_step_watch_test");
  ClockStepWatch watch(log.logger(), true);
  ASSERT_TRUE(watch.Notice(kNow).ok());
  const Status s = watch.Notice(kNow - kClockStepStopMs);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(CheckpointAheadConsequence(true)), std::string::npos) << s.ToString();
  EXPECT_EQ(watch.steps_back(), 1u);
}

}  // namespace
}  // namespace delaybridge::plugin
