#include <gtest/gtest.h>

#include "tools/load/duration_spec.h"

namespace delaybridge::load {
namespace {

TEST(DurationSpec, ReadsEveryUnit) {
  EXPECT_EQ(ParseDurationMs("250").value(), 250);
  EXPECT_EQ(ParseDurationMs("250ms").value(), 250);
  EXPECT_EQ(ParseDurationMs("5s").value(), 5'000);
  EXPECT_EQ(ParseDurationMs("2m").value(), 120'000);
  EXPECT_EQ(ParseDurationMs("3h").value(), 3 * 3'600'000);
  EXPECT_EQ(ParseDurationMs("30d").value(), int64_t{30} * 86'400'000);
  EXPECT_EQ(ParseDurationMs("0s").value(), 0);
}

TEST(DurationSpec, RejectsBadTextNamingIt) {
  for (const char* bad : {"", "-5s", "5x", "s", "5 s", "1.5s", "99999999999999999999"}) {
    Result<int64_t> parsed = ParseDurationMs(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(DurationSpec, RejectsOverflowOfMilliseconds) {
  Result<int64_t> parsed = ParseDurationMs("9223372036854775807d");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("overflows"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::load
