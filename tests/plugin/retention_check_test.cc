// RetentionProblems: which delay-topic settings could let Kafka delete a record before it is
// delivered, and what the message tells the operator to change.
#include "plugin/retention_check.h"

#include <gtest/gtest.h>

namespace delaybridge::plugin {
namespace {

constexpr int64_t kDayMs = 86'400'000;

TEST(RetentionCheckTest, LongEnoughOrUnlimitedRetentionIsSafe) {
  const std::vector<TopicRetention> topics = {{"a", 8 * kDayMs, -1, "delete"},
                                              {"b", -1, -1, "delete"}};
  EXPECT_TRUE(RetentionProblems(topics, 7 * kDayMs, kDayMs).empty());
}

TEST(RetentionCheckTest, ShortRetentionNamesTopicSettingAndFix) {
  const auto problems =
      RetentionProblems({{"delayed", 7 * kDayMs, -1, "delete"}}, 30 * kDayMs, kDayMs);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("delay topic delayed has retention.ms=604800000 (7d)"),
            std::string::npos)
      << problems[0];
  EXPECT_NE(problems[0].find("max_delay 30d + retention_margin 1d"), std::string::npos);
  EXPECT_NE(problems[0].find("--entity-name delayed --add-config retention.ms=-1"),
            std::string::npos);
}

TEST(RetentionCheckTest, CompactionAndSizeRetentionAreUnsafe) {
  const auto problems = RetentionProblems(
      {{"c", -1, -1, "compact,delete"}, {"d", -1, 1 << 30, "delete"}}, kDayMs, kDayMs);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("cleanup.policy=compact,delete"), std::string::npos);
  EXPECT_NE(problems[1].find("retention.bytes=1073741824"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::plugin
