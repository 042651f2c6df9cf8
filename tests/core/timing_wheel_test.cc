// Examples and edge cases of TimingWheel (core/timing_wheel.h): how a caller schedules,
// cancels, sleeps until next_deadline_ms() and advances; what happens at the boundaries.
#include "core/timing_wheel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace delaybridge {
namespace {

struct Fired {
  uint64_t payload;
  int64_t deadline_ms;
  int64_t fired_at_ms;
  bool operator==(const Fired&) const = default;
};

// The bridge's loop: sleep until next_deadline_ms(), advance to it, repeat until empty.
std::vector<Fired> DriveUntilEmpty(TimingWheel& wheel) {
  std::vector<Fired> fired;
  while (auto next_ms = wheel.next_deadline_ms()) {
    const int64_t now_ms = std::max(*next_ms, wheel.now_ms());
    wheel.advance(now_ms, [&](uint64_t payload, int64_t deadline_ms) {
      fired.push_back({payload, deadline_ms, now_ms});
    });
  }
  return fired;
}

std::vector<uint64_t> AdvanceCollect(TimingWheel& wheel, int64_t now_ms) {
  std::vector<uint64_t> payloads;
  wheel.advance(now_ms, [&](uint64_t payload, int64_t) { payloads.push_back(payload); });
  return payloads;
}

TEST(TimingWheelTest, EmptyWheelHasNothingToDo) {
  TimingWheel wheel(1, 5'000);
  EXPECT_TRUE(wheel.empty());
  EXPECT_EQ(wheel.tick_ms(), 1);
  EXPECT_EQ(wheel.now_ms(), 5'000);
  EXPECT_EQ(wheel.next_deadline_ms(), std::nullopt);
  EXPECT_EQ(wheel.advance(1'000'000, [](uint64_t, int64_t) { FAIL(); }), 0u);
  EXPECT_EQ(wheel.now_ms(), 1'000'000);
  EXPECT_FALSE(wheel.cancel(TimerHandle{}));
}

TEST(TimingWheelTest, CreateRejectsTicksBelowOneMillisecond) {
  auto bad = TimingWheel::create(0, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("tick_ms"), std::string::npos);
  EXPECT_FALSE(TimingWheel::create(-5, 0).ok());
  auto good = TimingWheel::create(7, 100);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->tick_ms(), 7);
  EXPECT_EQ(good->now_ms(), 100);
}

TEST(TimingWheelTest, FiresWhenTheDeadlineIsReachedAndNotBefore) {
  TimingWheel wheel(1, 0);
  wheel.schedule(10, 1);
  wheel.schedule(5, 2);
  EXPECT_EQ(wheel.next_deadline_ms(), 5);
  EXPECT_TRUE(AdvanceCollect(wheel, 4).empty());
  EXPECT_EQ(AdvanceCollect(wheel, 5), std::vector<uint64_t>{2});
  EXPECT_EQ(wheel.next_deadline_ms(), 10);
  EXPECT_TRUE(AdvanceCollect(wheel, 9).empty());
  EXPECT_EQ(AdvanceCollect(wheel, 10), std::vector<uint64_t>{1});
  EXPECT_TRUE(wheel.empty());
}

TEST(TimingWheelTest, DeadlineEqualToNowFiresOnTheNextAdvance) {
  TimingWheel wheel(1, 1'000);
  wheel.schedule(1'000, 7);
  EXPECT_EQ(wheel.next_deadline_ms(), 1'000);
  EXPECT_EQ(AdvanceCollect(wheel, 1'000), std::vector<uint64_t>{7});
}

TEST(TimingWheelTest, PastDeadlinesFireOnTheNextAdvance) {
  TimingWheel wheel(7, 1'000);
  wheel.advance(1'003, [](uint64_t, int64_t) {});  // inside a tick on purpose
  wheel.schedule(1'002, 1);                        // earlier in the current tick
  wheel.schedule(990, 2);                          // before the wheel's start
  wheel.schedule(INT64_MIN, 3);
  ASSERT_TRUE(wheel.next_deadline_ms().has_value());
  EXPECT_LE(*wheel.next_deadline_ms(), wheel.now_ms());  // no reason to sleep
  EXPECT_EQ(AdvanceCollect(wheel, 1'003), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(TimingWheelTest, CoarseTickFiresExactlyAndNextDeadlineRoundsUp) {
  TimingWheel wheel(1'000, 0);
  wheel.schedule(1'500, 1);
  wheel.schedule(1'800, 2);
  EXPECT_EQ(wheel.next_deadline_ms(), 2'000);  // one wake-up for the whole tick
  EXPECT_TRUE(AdvanceCollect(wheel, 1'499).empty());
  EXPECT_EQ(AdvanceCollect(wheel, 1'500), std::vector<uint64_t>{1});
  EXPECT_EQ(wheel.next_deadline_ms(), 2'000);
  EXPECT_EQ(AdvanceCollect(wheel, 2'000), std::vector<uint64_t>{2});
  wheel.schedule(3'000, 3);  // on a boundary: no rounding needed
  EXPECT_EQ(wheel.next_deadline_ms(), 3'000);
}

TEST(TimingWheelTest, NextDeadlineIsExactForTimersInCoarseLevels) {
  TimingWheel wheel(1, 0);
  wheel.schedule(100'000, 1);  // level 2
  wheel.schedule(7 * 3'600'000 + 3, 2);
  EXPECT_EQ(wheel.next_deadline_ms(), 100'000);
  EXPECT_TRUE(AdvanceCollect(wheel, 99'999).empty());
  EXPECT_EQ(wheel.next_deadline_ms(), 100'000);
  EXPECT_EQ(AdvanceCollect(wheel, 100'000), std::vector<uint64_t>{1});
  EXPECT_EQ(wheel.next_deadline_ms(), 7 * 3'600'000 + 3);
}

TEST(TimingWheelTest, NextDeadlineAfterCancelIsNeverLateAndRecovers) {
  TimingWheel wheel(1, 0);
  const TimerHandle first = wheel.schedule(100'000, 1);
  wheel.schedule(100'500, 2);  // same level-2 slot as the first
  ASSERT_TRUE(wheel.cancel(first));
  const auto next_ms = wheel.next_deadline_ms();
  ASSERT_TRUE(next_ms.has_value());
  EXPECT_LE(*next_ms, 100'500);  // the cancelled deadline may linger as a lower bound
  EXPECT_TRUE(AdvanceCollect(wheel, *next_ms < 100'500 ? *next_ms : 100'499).empty());
  EXPECT_EQ(wheel.next_deadline_ms(), 100'500);
}

TEST(TimingWheelTest, SameDeadlineManyTimesFiresInScheduleOrder) {
  TimingWheel wheel(1, 0);
  constexpr uint64_t kTimers = 10'000;
  for (uint64_t i = 0; i < kTimers; ++i) wheel.schedule(123'456'789, i);  // cascades 4 levels
  const std::vector<Fired> fired = DriveUntilEmpty(wheel);
  ASSERT_EQ(fired.size(), kTimers);
  for (uint64_t i = 0; i < kTimers; ++i) {
    EXPECT_EQ(fired[i], (Fired{i, 123'456'789, 123'456'789}));
  }
}

TEST(TimingWheelTest, CancelReportsWhetherTheTimerWasPending) {
  TimingWheel wheel(1, 0);
  const TimerHandle fired = wheel.schedule(5, 1);
  const TimerHandle cancelled = wheel.schedule(6, 2);
  wheel.advance(5, [](uint64_t, int64_t) {});
  EXPECT_FALSE(wheel.cancel(fired));  // already fired
  EXPECT_TRUE(wheel.cancel(cancelled));
  EXPECT_FALSE(wheel.cancel(cancelled));  // already cancelled
  // The slab reuses the cancelled entry; the old handle must not cancel the new timer.
  const TimerHandle reused = wheel.schedule(50, 3);
  EXPECT_EQ(reused.index, cancelled.index);
  EXPECT_FALSE(wheel.cancel(cancelled));
  EXPECT_FALSE(wheel.cancel(TimerHandle{reused.index + 1000, 0}));  // never handed out
  EXPECT_FALSE(wheel.cancel(TimerHandle{}));
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_EQ(AdvanceCollect(wheel, 50), std::vector<uint64_t>{3});
}

TEST(TimingWheelTest, CancelFromInsideACallback) {
  TimingWheel wheel(1, 0);
  TimerHandle own;
  TimerHandle same_tick;
  TimerHandle later;
  std::vector<uint64_t> fired;
  own = wheel.schedule(10, 1);
  same_tick = wheel.schedule(10, 2);
  later = wheel.schedule(11, 3);
  wheel.advance(20, [&](uint64_t payload, int64_t) {
    fired.push_back(payload);
    if (payload == 1) {
      EXPECT_FALSE(wheel.cancel(own));  // it is firing: no longer pending
      EXPECT_TRUE(wheel.cancel(same_tick));
      EXPECT_TRUE(wheel.cancel(later));
    }
  });
  EXPECT_EQ(fired, std::vector<uint64_t>{1});
  EXPECT_TRUE(wheel.empty());
}

TEST(TimingWheelTest, ScheduleFromInsideACallback) {
  TimingWheel wheel(1, 0);
  wheel.schedule(10, 1);
  wheel.schedule(15, 2);
  std::vector<Fired> fired;
  wheel.advance(20, [&](uint64_t payload, int64_t deadline_ms) {
    fired.push_back({payload, deadline_ms, 20});
    if (payload == 1) {
      wheel.schedule(3, 10);   // overdue: fires right after this callback
      wheel.schedule(12, 11);  // before timer 2: fires before it
      wheel.schedule(20, 12);  // == now: fires in this call
      wheel.schedule(21, 13);  // future: stays
    }
  });
  EXPECT_EQ(fired, (std::vector<Fired>{
                       {1, 10, 20}, {10, 3, 20}, {11, 12, 20}, {2, 15, 20}, {12, 20, 20}}));
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_EQ(wheel.next_deadline_ms(), 21);
}

TEST(TimingWheelTest, AdvancingBackwardsDoesNotMoveTimeBack) {
  TimingWheel wheel(1, 1'000);
  wheel.advance(2'000, [](uint64_t, int64_t) {});
  wheel.schedule(2'001, 1);
  EXPECT_TRUE(AdvanceCollect(wheel, 500).empty());
  EXPECT_EQ(wheel.now_ms(), 2'000);
  EXPECT_EQ(AdvanceCollect(wheel, 2'001), std::vector<uint64_t>{1});
}

// Puts the wheel one tick before a boundary of each level and fires timers on both sides of
// it: every level's slot index wraps from 63 to 0 there.
TEST(TimingWheelTest, EveryLevelWrapsAround) {
  for (int level = 0; level < wheel::kLevels - 1; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    const int64_t boundary_ms = int64_t{1} << (wheel::kSlotBits * (level + 1));
    const int64_t slot_width_ms = int64_t{1} << (wheel::kSlotBits * level);
    TimingWheel wheel(1, 0);
    wheel.advance(boundary_ms - 3, [](uint64_t, int64_t) {});
    const std::vector<int64_t> deadlines_ms = {boundary_ms - 2,
                                               boundary_ms - 1,
                                               boundary_ms,
                                               boundary_ms + 1,
                                               boundary_ms + slot_width_ms,
                                               boundary_ms + 5 * slot_width_ms + 3,
                                               2 * boundary_ms - 1,
                                               boundary_ms + boundary_ms / 2};
    std::vector<Fired> expected;
    for (size_t i = 0; i < deadlines_ms.size(); ++i) wheel.schedule(deadlines_ms[i], i);
    for (size_t i = 0; i < deadlines_ms.size(); ++i) {
      expected.push_back({i, deadlines_ms[i], deadlines_ms[i]});
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Fired& a, const Fired& b) { return a.deadline_ms < b.deadline_ms; });
    EXPECT_EQ(DriveUntilEmpty(wheel), expected);
  }
}

TEST(TimingWheelTest, DeadlinesYearsAheadFireOnTime) {
  constexpr int64_t kYearMs = 365LL * 24 * 3'600'000;
  constexpr int64_t kStartMs = 1'795'000'000'000;  // late 2026
  TimingWheel wheel(1, kStartMs);
  const std::vector<int64_t> deadlines_ms = {kStartMs + 1,
                                             kStartMs + kYearMs,
                                             kStartMs + 10 * kYearMs,
                                             kStartMs + 10 * kYearMs + 1,
                                             kStartMs + 300 * kYearMs,
                                             INT64_MAX - 1,
                                             INT64_MAX};
  for (size_t i = 0; i < deadlines_ms.size(); ++i) wheel.schedule(deadlines_ms[i], i);
  std::vector<Fired> expected;
  for (size_t i = 0; i < deadlines_ms.size(); ++i) {
    expected.push_back({i, deadlines_ms[i], deadlines_ms[i]});
  }
  EXPECT_EQ(DriveUntilEmpty(wheel), expected);
}

TEST(TimingWheelTest, TenYearDeadlinesWithCoarseTicksAreNotClamped) {
  constexpr int64_t kTenYearsMs = 3'650LL * 24 * 3'600'000;
  TimingWheel wheel(1'000, 0);
  wheel.schedule(kTenYearsMs + 500, 1);
  EXPECT_EQ(wheel.next_deadline_ms(), kTenYearsMs + 1'000);
  EXPECT_TRUE(AdvanceCollect(wheel, kTenYearsMs + 499).empty());
  EXPECT_EQ(AdvanceCollect(wheel, kTenYearsMs + 500), std::vector<uint64_t>{1});
}

TEST(TimingWheelTest, APendingTimerCostsAtMost64Bytes) {
  TimingWheel wheel(1, 0);
  const size_t empty_bytes = wheel.memory_bytes();
  for (uint64_t i = 1; i <= 300'000; ++i) {
    wheel.schedule(static_cast<int64_t>(i * 7919 % 86'400'000), i);
    if (i % 1'000 == 0) {
      const double bytes_per_timer =
          static_cast<double>(wheel.memory_bytes() - empty_bytes) / static_cast<double>(i);
      ASSERT_LE(bytes_per_timer, 64.0) << "after " << i << " timers";
    }
  }
  TimingWheel reserved(1, 0);
  reserved.reserve(100'000);
  for (uint64_t i = 0; i < 100'000; ++i) reserved.schedule(static_cast<int64_t>(i), i);
  // The slab stays within its reservation; the coarse slots' arrays add at most 16 bytes a timer.
  EXPECT_GE(reserved.memory_bytes() - empty_bytes, 100'000u * 32);
  EXPECT_LE(reserved.memory_bytes() - empty_bytes, 100'000u * (32 + 16));
}

TEST(TimingWheelTest, TimersCancelledFarAheadDoNotPileUpInTheirSlot) {
  // Timeouts that never happen: scheduled hours ahead, cancelled at once, a million times, while
  // one timer keeps the wheel from being empty.
  TimingWheel wheel(1, 0);
  wheel.schedule(10 * 3'600'000, 1);
  const size_t one_timer_bytes = wheel.memory_bytes();
  for (uint64_t i = 0; i < 1'000'000; ++i) {
    ASSERT_TRUE(wheel.cancel(wheel.schedule(3 * 3'600'000 + static_cast<int64_t>(i % 1'000), i)));
  }
  EXPECT_LT(wheel.memory_bytes() - one_timer_bytes, 64u * 1'024);
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_EQ(AdvanceCollect(wheel, 10 * 3'600'000), std::vector<uint64_t>{1});
}

TEST(TimingWheelTest, ACompactedCoarseSlotKeepsItsTimersInOrderAndCancellable) {
  // 200 timers in one tick of a level-2 slot; the 100th cancel compacts its array (half of it
  // empty), and the cancels after it find the timers at their new places.
  TimingWheel wheel(1, 0);
  std::vector<TimerHandle> handles;
  for (uint64_t i = 0; i < 200; ++i) handles.push_back(wheel.schedule(5'000, i));
  for (uint64_t i = 0; i < 200; i += 2) ASSERT_TRUE(wheel.cancel(handles[i]));
  for (uint64_t i = 1; i < 30; i += 2) ASSERT_TRUE(wheel.cancel(handles[i]));
  for (uint64_t i = 200; i < 205; ++i) wheel.schedule(5'000, i);
  std::vector<uint64_t> expected;
  for (uint64_t i = 31; i < 200; i += 2) expected.push_back(i);
  for (uint64_t i = 200; i < 205; ++i) expected.push_back(i);
  EXPECT_EQ(wheel.size(), expected.size());
  EXPECT_EQ(AdvanceCollect(wheel, 5'000), expected);
  EXPECT_TRUE(wheel.empty());
}

TEST(TimingWheelTest, AnEntryCancelledAndReusedInTheSameCoarseSlotFiresOnceInItsNewOrder) {
  TimingWheel wheel(1, 0);
  const TimerHandle first = wheel.schedule(5'000, 1);
  wheel.schedule(5'000, 2);
  ASSERT_TRUE(wheel.cancel(first));
  wheel.schedule(5'000, 3);  // takes the cancelled timer's entry, in the same slot
  EXPECT_EQ(AdvanceCollect(wheel, 5'000), (std::vector<uint64_t>{2, 3}));
  EXPECT_TRUE(wheel.empty());
  EXPECT_EQ(wheel.next_deadline_ms(), std::nullopt);
}

TEST(TimingWheelTest, AWheelWhoseTimersWereAllCancelledHasNoDeadline) {
  TimingWheel wheel(1, 0);
  const TimerHandle a = wheel.schedule(70, 1);
  const TimerHandle b = wheel.schedule(9'000'000, 2);
  ASSERT_TRUE(wheel.cancel(a));
  ASSERT_TRUE(wheel.next_deadline_ms().has_value());
  EXPECT_LE(*wheel.next_deadline_ms(), 9'000'000);  // a lower bound: a's slot may still name it
  ASSERT_TRUE(wheel.cancel(b));
  EXPECT_EQ(wheel.next_deadline_ms(), std::nullopt);
  wheel.schedule(80, 3);
  EXPECT_EQ(wheel.next_deadline_ms(), 80);
  EXPECT_EQ(AdvanceCollect(wheel, 9'000'000), std::vector<uint64_t>{3});
}

}  // namespace
}  // namespace delaybridge
