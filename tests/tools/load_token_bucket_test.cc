#include <gtest/gtest.h>

#include "tools/load/token_bucket.h"

namespace delaybridge::load {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;

TEST(TokenBucket, UnlimitedGrantsEverything) {
  TokenBucket bucket(0, 1, 0);
  EXPECT_EQ(bucket.Take(1'000'000, 0), 1'000'000);
  EXPECT_EQ(bucket.NanosUntilNextToken(0), 0);
}

TEST(TokenBucket, GrantsTheRateOverTime) {
  TokenBucket bucket(1000, 10, 0);  // 1000/s, bursts of 10
  int64_t granted = 0;
  // Ask every 100 us for one simulated second.
  for (int64_t now_ns = 0; now_ns <= kSecondNs; now_ns += 100'000)
    granted += bucket.Take(100, now_ns);
  EXPECT_GE(granted, 999);
  EXPECT_LE(granted, 1001);
}

TEST(TokenBucket, BurstCapsWhatAnIdleSpellSaves) {
  TokenBucket bucket(1000, 10, 0);
  EXPECT_EQ(bucket.Take(1'000, 60 * kSecondNs), 10);
  EXPECT_EQ(bucket.Take(1'000, 60 * kSecondNs), 0);
}

TEST(TokenBucket, SaysHowLongUntilTheNextToken) {
  TokenBucket bucket(1000, 1, 0);  // one token per millisecond
  // Floating-point token counts may round the wait up by a nanosecond.
  EXPECT_NEAR(bucket.NanosUntilNextToken(0), 1'000'000, 1);
  EXPECT_NEAR(bucket.NanosUntilNextToken(400'000), 600'000, 1);
  EXPECT_EQ(bucket.NanosUntilNextToken(1'000'001), 0);
  EXPECT_EQ(bucket.Take(1, 1'000'001), 1);
  EXPECT_NEAR(bucket.NanosUntilNextToken(1'000'001), 1'000'000, 1);
}

}  // namespace
}  // namespace delaybridge::load
