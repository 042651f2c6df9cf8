// WarningThrottle: the first warning of an interval is logged, the rest are counted and the
// count is reported with the next logged one.
#include "plugin/warning_throttle.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

TEST(WarningThrottleTest, OnePerIntervalWithTheSuppressedCount) {
  testing::TempDir dir("warning-throttle");
  const std::string path = dir.File("log");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  Logger logger(LogLevel::kInfo, fd);
  ManualClock clock(1'000'000);
  WarningThrottle warnings(logger, clock, 1000);

  warnings.Warn("disk slow 1");
  clock.advance_ms(10);
  warnings.Warn("disk slow 2");  // suppressed
  clock.advance_ms(500);
  warnings.Warn("disk slow 3");  // suppressed
  clock.advance_ms(490);
  warnings.Warn("disk slow 4");  // 1000 ms after the first: logged with the count
  warnings.Warn("disk slow 5");  // suppressed again
  ::close(fd);

  const std::string log = testing::ReadFile(path);
  EXPECT_NE(log.find("WARN  disk slow 1\n"), std::string::npos) << log;
  EXPECT_EQ(log.find("disk slow 2"), std::string::npos) << log;
  EXPECT_EQ(log.find("disk slow 3"), std::string::npos) << log;
  EXPECT_NE(log.find("WARN  disk slow 4 (2 similar warnings suppressed)\n"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("disk slow 5"), std::string::npos) << log;
}

}  // namespace
}  // namespace delaybridge::plugin
