// Tests of the clocks (core/clock.h): the manual clock moves only when told, the system clock
// reads Unix epoch milliseconds and does not run backwards between two reads.
#include "core/clock.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace delaybridge {
namespace {

TEST(ManualClockTest, MovesOnlyWhenTold) {
  ManualClock clock(1'000);
  EXPECT_EQ(clock.now_ms(), 1'000);
  EXPECT_EQ(clock.now_ms(), 1'000);
  clock.advance_ms(250);
  EXPECT_EQ(clock.now_ms(), 1'250);
  clock.set_ms(42);
  EXPECT_EQ(clock.now_ms(), 42);
}

TEST(ManualClockTest, WorksThroughTheClockInterface) {
  ManualClock manual(7);
  const Clock& clock = manual;
  manual.advance_ms(3);
  EXPECT_EQ(clock.now_ms(), 10);
}

TEST(SystemClockTest, ReadsEpochMillisecondsThatDoNotGoBackwards) {
  SystemClock clock;
  const int64_t first_ms = clock.now_ms();
  // 2020-01-01 and 2100-01-01 in epoch ms: a value in seconds or microseconds falls outside.
  EXPECT_GT(first_ms, int64_t{1'577'836'800'000});
  EXPECT_LT(first_ms, int64_t{4'102'444'800'000});
  int64_t previous_ms = first_ms;
  for (int i = 0; i < 1000; ++i) {
    const int64_t now_ms = clock.now_ms();
    // The wall clock may be stepped by NTP, but not by a second within this loop.
    EXPECT_GE(now_ms, previous_ms - 1000);
    previous_ms = now_ms;
  }
}

}  // namespace
}  // namespace delaybridge
