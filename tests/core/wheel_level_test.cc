// Tests of the pure level helpers behind TimingWheel (core/wheel_level.h).
#include "core/wheel_level.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace delaybridge::wheel {
namespace {

TEST(WheelLevelTest, ElevenLevelsCoverEverySixtyFourBitTick) {
  EXPECT_EQ(kLevels, 11);
  EXPECT_EQ(level_for(0, UINT64_MAX), kLevels - 1);
}

TEST(WheelLevelTest, LevelIsTheHighestDifferingDigit) {
  EXPECT_EQ(level_for(100, 100), 0);  // the current tick
  EXPECT_EQ(level_for(100, 120), 0);  // (1, 36) vs (1, 56)
  EXPECT_EQ(level_for(100, 130), 1);  // (1, 36) vs (2, 2)
  EXPECT_EQ(level_for(100, 5000), 2);
  EXPECT_EQ(level_for(63, 64), 1);  // one tick ahead, but across a level-1 boundary
  EXPECT_EQ(level_for(0, uint64_t{1} << 36), 6);
}

TEST(WheelLevelTest, SlotIsTheDigitOfTheLevel) {
  EXPECT_EQ(slot_for(120, 0), 56u);
  EXPECT_EQ(slot_for(130, 1), 2u);
  EXPECT_EQ(slot_for(5000, 2), 1u);
  EXPECT_EQ(slot_for(UINT64_MAX, 10), 15u);  // the top level uses 4 bits
}

TEST(WheelLevelTest, SlotStartKeepsHigherDigitsAndZeroesLowerOnes) {
  EXPECT_EQ(slot_start_tick(100, 1, 2), 128u);
  EXPECT_EQ(slot_start_tick(100, 0, 56), 120u);
  EXPECT_EQ(slot_start_tick(100, 2, 1), 4096u);
  EXPECT_EQ(slot_start_tick(0, 10, 15), uint64_t{15} << 60);
}

TEST(WheelLevelTest, NextOccupiedSlotIsStrictlyAfterTheCurrentOne) {
  EXPECT_EQ(next_occupied_slot_after(0, 0), -1);
  EXPECT_EQ(next_occupied_slot_after(uint64_t{1} << 5, 5), -1);
  EXPECT_EQ(next_occupied_slot_after((uint64_t{1} << 5) | (uint64_t{1} << 9), 5), 9);
  EXPECT_EQ(next_occupied_slot_after(uint64_t{1} << 63, 62), 63);
  EXPECT_EQ(next_occupied_slot_after(~uint64_t{0}, 63), -1);
}

}  // namespace
}  // namespace delaybridge::wheel
