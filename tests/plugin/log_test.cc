// Logger: one event is one line, whatever bytes a record's headers or topic names put into the
// message.
#include "plugin/log.h"

#include <gtest/gtest.h>

#include "tests/plugin/log_capture.h"

namespace delaybridge::plugin {
namespace {

TEST(LoggerTest, ControlBytesAreEscapedSoNoLineCanBeForged) {
  LogCapture log("log_test");
  log.logger().Warn(std::string("bad header \"x\nINFO  forged\r\x1b[2J\x7f\" end") + '\0' + "!");
  const std::string text = log.Text();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("bad header \"x\\x0aINFO  forged\\x0d\\x1b[2J\\x7f\" end\\x00!"),
            std::string::npos)
      << text;
}

TEST(LoggerTest, LevelsBelowTheMinimumAreNotWritten) {
  LogCapture log("log_test");  // kInfo
  log.logger().Debug("hidden");
  log.logger().Info("shown");
  const std::string text = log.Text();
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  EXPECT_NE(text.find("INFO  shown"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::plugin
