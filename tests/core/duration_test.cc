#include "core/duration.h"

#include <gtest/gtest.h>

namespace delaybridge {
namespace {

TEST(DurationTest, ReadsEveryUnit) {
  EXPECT_EQ(ParseDurationMs("500ms").value(), 500);
  EXPECT_EQ(ParseDurationMs("30s").value(), 30'000);
  EXPECT_EQ(ParseDurationMs("15m").value(), 900'000);
  EXPECT_EQ(ParseDurationMs("2h").value(), 7'200'000);
  EXPECT_EQ(ParseDurationMs("3650d").value(), 3650LL * 86'400'000);
  EXPECT_EQ(ParseDurationMs("0s").value(), 0);
}

TEST(DurationTest, RefusesWhatIsNotADuration) {
  for (const char* bad : {"", "ms", "10", "10x", "-5s", "1.5h", " 5s", "5 s", "5s "}) {
    const Result<int64_t> parsed = ParseDurationMs(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), "must be a duration like 500ms, 30s, 15m, 2h or 3650d")
        << bad;
  }
}

TEST(DurationTest, RefusesWhatOverflowsMilliseconds) {
  for (const char* big : {"99999999999999999999d", "106751991167301d", "9223372036854775807s"}) {
    const Result<int64_t> parsed = ParseDurationMs(big);
    ASSERT_FALSE(parsed.ok()) << big;
    EXPECT_EQ(parsed.status().message(), "overflows 64-bit milliseconds") << big;
  }
  EXPECT_EQ(ParseDurationMs("9223372036854775807ms").value(), INT64_MAX);
}

TEST(DurationTest, ABareNumberIsMillisecondsOnlyWhenAsked) {
  EXPECT_FALSE(ParseDurationMs("250").ok());
  EXPECT_EQ(ParseDurationMs("250", BareNumber::kMilliseconds).value(), 250);
  EXPECT_EQ(ParseDurationMs("2s", BareNumber::kMilliseconds).value(), 2000);
  EXPECT_FALSE(ParseDurationMs("-250", BareNumber::kMilliseconds).ok());
}

}  // namespace
}  // namespace delaybridge
