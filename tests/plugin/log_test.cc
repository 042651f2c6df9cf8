// Logger: one event is one line, whatever bytes a record's headers or topic names put into the
// message; in the json format, that line is one valid JSON object.
#include "plugin/log.h"

#include <gtest/gtest.h>

#include "tests/plugin/json_log_line.h"
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

TEST(LoggerTest, JsonLinesAreOneObjectEachWithTheMessageEscaped) {
  LogCapture log("log_test", LogFormat::kJson);
  log.logger().Warn("say \"hi\"\\ back\nforged \u00e9 \xff end");
  log.logger().Info("second");
  const std::string text = log.Text();
  const std::string first_line = text.substr(0, text.find('\n'));
  const std::optional<JsonLogLine> first = ParseJsonLogLine(first_line);
  ASSERT_TRUE(first.has_value()) << text;
  EXPECT_EQ(first->level, "warn");
  // Quote and backslash escaped for JSON; the newline and the byte that is not UTF-8 written as
  // the text \xNN; the UTF-8 letter kept.
  EXPECT_EQ(first->message, R"(say \"hi\"\\ back\\x0aforged )"
                            "\u00e9"
                            R"( \\xff end)");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find(R"("level":"info","message":"second"})"), std::string::npos) << text;
}

TEST(LoggerTest, JsonKeepsWellFormedUtf8AndEscapesEveryMalformedByte) {
  LogCapture log("log_test", LogFormat::kJson);
  // Kept: 2, 3 and 4 bytes. Escaped: an overlong "/", a surrogate, a sequence cut short, a
  // stray continuation byte, a code point past U+10FFFF.
  log.logger().Info(
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82|\x80|\xf4\x90\x80\x80");
  const std::string text = log.Text();
  EXPECT_NE(text.find(R"("message":")"
                      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                      R"(|\\xc0\\xaf|\\xed\\xa0\\x80|\\xe2\\x82|\\x80|\\xf4\\x90\\x80\\x80"})"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace delaybridge::plugin
