#include <gtest/gtest.h>

#include "tools/load/delay_distribution.h"

namespace delaybridge::load {
namespace {

constexpr uint64_t kSeed = 42;
constexpr int64_t kDayMs = 86'400'000;

TEST(DelayDistribution, FixedAlwaysGivesItsDelay) {
  Result<DelayDistribution> fixed = DelayDistribution::Parse("fixed:2s");
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  std::mt19937_64 engine(kSeed);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(fixed->NextMs(engine), 2'000);
  EXPECT_EQ(fixed->min_ms(), 2'000);
  EXPECT_EQ(fixed->max_ms(), 2'000);
}

TEST(DelayDistribution, UniformStaysInRangeAndReachesBothHalves) {
  Result<DelayDistribution> uniform = DelayDistribution::Parse("uniform:100..300ms");
  ASSERT_TRUE(uniform.ok()) << uniform.status().ToString();
  std::mt19937_64 engine(kSeed);
  int low_half = 0;
  for (int i = 0; i < 1000; ++i) {
    const int64_t delay_ms = uniform->NextMs(engine);
    ASSERT_GE(delay_ms, 100) << "seed " << kSeed;
    ASSERT_LE(delay_ms, 300) << "seed " << kSeed;
    low_half += delay_ms < 200;
  }
  EXPECT_GT(low_half, 300) << "seed " << kSeed;
  EXPECT_LT(low_half, 700) << "seed " << kSeed;
}

TEST(DelayDistribution, MixSpansSecondsToDays) {
  Result<DelayDistribution> mix = DelayDistribution::Parse("mix");
  ASSERT_TRUE(mix.ok());
  EXPECT_EQ(mix->min_ms(), 1'000);
  EXPECT_EQ(mix->max_ms(), 30 * kDayMs);
  std::mt19937_64 engine(kSeed);
  int under_minute = 0;
  int over_day = 0;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t delay_ms = mix->NextMs(engine);
    ASSERT_GE(delay_ms, 1'000);
    ASSERT_LE(delay_ms, 30 * kDayMs);
    under_minute += delay_ms <= 60'000;
    over_day += delay_ms > kDayMs;
  }
  // Weights 50% and 10%; wide bounds keep this deterministic seed far from the edges.
  EXPECT_GT(under_minute, 4'000) << "seed " << kSeed;
  EXPECT_GT(over_day, 500) << "seed " << kSeed;
}

TEST(DelayDistribution, RejectsBadSpecsNamingThem) {
  for (const char* bad : {"", "fixed", "fixed:", "fixed:-1", "uniform:5s", "uniform:5s..1s",
                          "uniform:1s..", "gauss:1s", "mixed"}) {
    Result<DelayDistribution> parsed = DelayDistribution::Parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("--delay"), std::string::npos)
        << parsed.status().message();
  }
}

}  // namespace
}  // namespace delaybridge::load
