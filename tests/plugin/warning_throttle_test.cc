// WarningThrottle: the first warning of an interval is logged, the rest are counted and the
// count is reported with the next logged one.
#include "plugin/warning_throttle.h"

#include <gtest/gtest.h>

#include "tests/plugin/log_capture.h"

namespace delaybridge::plugin {
namespace {

TEST(WarningThrottleTest, OnePerIntervalWithTheSuppressedCount) {
  LogCapture log("warning-throttle");
  ManualClock clock(1'000'000);
  WarningThrottle warnings(log.logger(), clock, 1000);

  warnings.Warn("disk slow 1");
  clock.advance_ms(10);
  warnings.Warn("disk slow 2");  // suppressed
  clock.advance_ms(500);
  warnings.Warn("disk slow 3");  // suppressed
  clock.advance_ms(490);
  warnings.Warn("disk slow 4");  // 1000 ms after the first: logged with the count
  warnings.Warn("disk slow 5");  // suppressed again

  const std::string text = log.Text();
  EXPECT_NE(text.find("WARN  disk slow 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("disk slow 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("disk slow 3"), std::string::npos) << text;
  EXPECT_NE(text.find("WARN  disk slow 4 (2 similar warnings suppressed)\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("disk slow 5"), std::string::npos) << text;
}

}  // namespace
}  // namespace delaybridge::plugin
