// DeliveryTracker: the checkpoint is the oldest unacknowledged record, never moves back, and
// with nothing outstanding never passes the time a new record could still be appended at.
#include "plugin/delivery_tracker.h"

#include <gtest/gtest.h>

namespace delaybridge::plugin {
namespace {

TEST(DeliveryTrackerTest, WatermarkIsTheOldestOutstandingRecord) {
  DeliveryTracker t(RecordPosition{1000, 0});
  t.Add({5000, 1});
  t.Add({5000, 0});
  t.Add({7000, 0});
  EXPECT_EQ(t.Watermark(10'000, 20'000), (RecordPosition{5000, 0}));
  EXPECT_TRUE(t.Acknowledge({5000, 1}));  // out of order: the watermark waits for 5000/0
  EXPECT_EQ(t.Watermark(10'000, 20'000), (RecordPosition{5000, 0}));
  EXPECT_TRUE(t.Acknowledge({5000, 0}));
  EXPECT_EQ(t.Watermark(10'000, 20'000), (RecordPosition{7000, 0}));
  EXPECT_FALSE(t.Acknowledge({5000, 0}));  // twice
  EXPECT_EQ(t.outstanding(), 1u);
}

// Records preloaded ahead of the clock hold the watermark at the clock, not at the oldest of
// them: a record appended now, due before them, must sort before them too.
TEST(DeliveryTrackerTest, OutstandingRecordsAheadOfTheClockHoldItAtTheClock) {
  DeliveryTracker t(RecordPosition{1000, 0});
  t.Add({9000, 0});
  EXPECT_EQ(t.Watermark(10'000, 6'000), (RecordPosition{6'000, 0}));
  EXPECT_EQ(t.Watermark(10'000, 9'500), (RecordPosition{9'000, 0}));
}

TEST(DeliveryTrackerTest, EmptyTrackerStopsAtTheEarlierOfHorizonAndNow) {
  DeliveryTracker t(RecordPosition{1000, 0});
  // Preloaded up to 10 s, but a record appended now (5 s) would be due at 5 s.
  EXPECT_EQ(t.Watermark(10'000, 5'000), (RecordPosition{5'000, 0}));
  // Preloading stalled at 8 s while the clock says 12 s: records of 8 s.. are still on disk.
  EXPECT_EQ(t.Watermark(8'000, 12'000), (RecordPosition{8'000, 0}));
  EXPECT_EQ(t.floor_ms(), 8'000);
}

TEST(DeliveryTrackerTest, NeverMovesBackwards) {
  DeliveryTracker t(RecordPosition{1000, 3});
  EXPECT_EQ(t.Watermark(0, 0), (RecordPosition{1000, 3}));  // the opening checkpoint holds
  EXPECT_EQ(t.Watermark(9000, 9000), (RecordPosition{9000, 0}));
  EXPECT_EQ(t.Watermark(9000, 4000), (RecordPosition{9000, 0}));  // the clock went back
  EXPECT_EQ(t.floor_ms(), 9000);
}

}  // namespace
}  // namespace delaybridge::plugin
