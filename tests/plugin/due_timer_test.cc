// DueTimer on a real io_context, read from a ManualClock: a token is handed over when the clock
// reaches its deadline (not when some real time passed), in deadline order and schedule order
// within a tick; the asio timer is armed at the earliest deadline rounded up to its tick, re-armed
// earlier, and not armed while nothing waits or while paused; what the callback schedules waits
// for the next turn. The io_context runs on the test thread, so the ManualClock needs no lock.
#include "plugin/due_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace delaybridge::plugin {
namespace {

using Tokens = std::vector<uint64_t>;
constexpr int64_t kStartMs = 1'000'000;

class DueTimerTest : public ::testing::Test {
 protected:
  // One call of the callback: the batch and the clock reading it came at.
  struct HandOver {
    Tokens tokens;
    int64_t now_ms;
    bool operator==(const HandOver&) const = default;
  };

  DueTimer::OnDue Record() {
    return [this](const Tokens& tokens, int64_t now_ms) {
      hand_overs_.push_back({tokens, now_ms});
      if (on_hand_over_) on_hand_over_(tokens, now_ms);
    };
  }

  // Runs handlers on this thread until done() holds. The 10 s bound only stops a broken test
  // from hanging; no assertion depends on how long the io_context ran.
  void RunUntil(const std::function<bool()>& done) {
    while (!done()) {
      ASSERT_EQ(io_.run_one_for(std::chrono::seconds(10)), 1u) << "nothing ran within 10 s";
    }
  }

  boost::asio::io_context io_;  // declared first: outlives the timers below
  ManualClock clock_{kStartMs};
  std::vector<HandOver> hand_overs_;
  DueTimer::OnDue on_hand_over_;  // optional, called after the hand-over is recorded
};

TEST_F(DueTimerTest, HandsATokenOverWhenTheClockReachesItsDeadline) {
  DueTimer timer(io_, clock_, 1, Record());
  timer.Schedule(kStartMs + 5, 1);
  timer.Schedule(kStartMs + 50, 2);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 5);
  io_.poll();
  EXPECT_TRUE(hand_overs_.empty());

  clock_.advance_ms(5);
  RunUntil([&] { return !hand_overs_.empty(); });
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{1}, kStartMs + 5}}));
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 50);  // re-armed for the next one
  EXPECT_EQ(timer.size(), 1u);
}

TEST_F(DueTimerTest, AWakeUpBeforeTheClockReachesTheDeadlineHandsNothingOverAndReArms) {
  DueTimer timer(io_, clock_, 1, Record());
  timer.Schedule(kStartMs + 5, 1);
  ASSERT_EQ(io_.run_one_for(std::chrono::seconds(10)), 1u);  // the wake-up; the clock stood still
  EXPECT_TRUE(hand_overs_.empty());
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 5);
}

TEST_F(DueTimerTest, IsArmedAtTheEarliestDeadlineRoundedUpToItsTick) {
  DueTimer timer(io_, clock_, 10, Record());
  EXPECT_EQ(timer.armed_at_ms(), std::nullopt);  // nothing waits: nothing ticks
  timer.Schedule(kStartMs + 60'000, 1);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 60'000);
  timer.Schedule(kStartMs + 15, 2);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 20);  // re-armed earlier, at the end of the tick
  timer.Schedule(kStartMs + 30, 3);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 20);  // later: stays
  timer.Schedule(kStartMs + 20, 4);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 20);  // at the wake-up: stays
  timer.Schedule(kStartMs + 17, 5);
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 20);  // earlier, in the wake-up's tick: stays

  clock_.set_ms(kStartMs + 20);
  RunUntil([&] { return !hand_overs_.empty(); });
  // 15 and 17 are in the tick that ends at 20, 20 in the next one, which 20 reaches too.
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{2, 5, 4}, kStartMs + 20}}));
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 30);
}

TEST_F(DueTimerTest, HandsOverEverythingDueInOneBatchInDeadlineThenScheduleOrder) {
  DueTimer timer(io_, clock_, 1, Record());
  for (const uint64_t token : {3, 1, 2}) timer.Schedule(kStartMs + 7, token);
  timer.Schedule(kStartMs + 3, 9);
  timer.Schedule(kStartMs + 11, 4);  // not due yet

  clock_.advance_ms(10);
  RunUntil([&] { return !hand_overs_.empty(); });
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{9, 3, 1, 2}, kStartMs + 10}}));
  EXPECT_EQ(timer.size(), 1u);
}

TEST_F(DueTimerTest, ACancelledTokenIsNotHandedOver) {
  DueTimer timer(io_, clock_, 1, Record());
  const TimerHandle cancelled = timer.Schedule(kStartMs + 5, 1);
  timer.Schedule(kStartMs + 5, 2);
  EXPECT_TRUE(timer.Cancel(cancelled));
  EXPECT_FALSE(timer.Cancel(cancelled));

  clock_.advance_ms(5);
  RunUntil([&] { return !hand_overs_.empty(); });
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{2}, kStartMs + 5}}));
  EXPECT_EQ(timer.size(), 0u);
  EXPECT_EQ(timer.armed_at_ms(), std::nullopt);
}

TEST_F(DueTimerTest, ATokenTheCallbackSchedulesWaitsForTheNextTurnEvenWhenDue) {
  DueTimer timer(io_, clock_, 1, Record());
  on_hand_over_ = [&](const Tokens& tokens, int64_t now_ms) {
    if (hand_overs_.size() == 1) timer.Schedule(now_ms, tokens[0]);  // try again at once
  };
  timer.Schedule(kStartMs, 1);
  RunUntil([&] { return hand_overs_.size() == 2; });
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{1}, kStartMs}, {{1}, kStartMs}}));
}

TEST_F(DueTimerTest, PausedItHandsNothingOverUntilResumeHandsOverWhatFellDue) {
  DueTimer timer(io_, clock_, 1, Record());
  timer.Schedule(kStartMs + 5, 1);
  timer.Pause();
  EXPECT_EQ(timer.armed_at_ms(), std::nullopt);
  timer.Schedule(kStartMs + 8, 2);
  EXPECT_EQ(timer.armed_at_ms(), std::nullopt);
  timer.Schedule(kStartMs + 20, 3);

  clock_.advance_ms(10);
  io_.poll();
  EXPECT_TRUE(hand_overs_.empty());
  timer.Resume();  // hands over at once, on the caller's thread
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{1, 2}, kStartMs + 10}}));
  EXPECT_EQ(timer.armed_at_ms(), kStartMs + 20);
}

TEST_F(DueTimerTest, HandOverDueHandsOverWhatIsDueEvenWhilePausedAndStaysPaused) {
  DueTimer timer(io_, clock_, 1, Record());
  timer.Pause();
  timer.Schedule(kStartMs, 1);
  timer.Schedule(kStartMs + 1, 2);
  timer.HandOverDue();
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{1}, kStartMs}}));
  EXPECT_EQ(timer.armed_at_ms(), std::nullopt);
  EXPECT_EQ(timer.next_deadline_ms(), kStartMs + 1);
}

TEST_F(DueTimerTest, HandOverDueIfLateHandsOverOnlyWhatIsDueAndNeverWhilePaused) {
  DueTimer timer(io_, clock_, 1, Record());
  timer.Schedule(kStartMs + 5, 1);
  timer.Schedule(kStartMs + 9, 2);
  EXPECT_FALSE(timer.HandOverDueIfLate());  // nothing due yet
  clock_.advance_ms(5);
  EXPECT_TRUE(timer.HandOverDueIfLate());  // on the caller's thread, no io_context turn
  EXPECT_EQ(hand_overs_, (std::vector<HandOver>{{{1}, kStartMs + 5}}));
  EXPECT_FALSE(timer.HandOverDueIfLate());

  timer.Pause();
  clock_.advance_ms(5);
  EXPECT_FALSE(timer.HandOverDueIfLate());
  EXPECT_EQ(hand_overs_.size(), 1u);
  timer.Resume();
  EXPECT_EQ(hand_overs_.back(), (HandOver{{2}, kStartMs + 10}));
}

// The after-wake callback runs after every wake-up, once what fell due was handed over and the
// timer re-armed for what is left, also when nothing fell due; never outside a wake-up.
TEST_F(DueTimerTest, AfterEveryWakeUpTheAfterWakeCallbackSeesTheNextWakeUp) {
  std::vector<std::optional<int64_t>> armed_after_wake;
  std::vector<size_t> hand_overs_before;
  std::unique_ptr<DueTimer> timer;
  timer = std::make_unique<DueTimer>(io_, clock_, 1, Record(), [&] {
    armed_after_wake.push_back(timer->armed_at_ms());
    hand_overs_before.push_back(hand_overs_.size());
  });
  timer->Schedule(kStartMs + 5, 1);
  timer->Schedule(kStartMs + 9, 2);
  timer->HandOverDue();  // not a wake-up
  EXPECT_TRUE(armed_after_wake.empty());

  ASSERT_EQ(io_.run_one_for(std::chrono::seconds(10)), 1u);  // woke early: nothing due
  EXPECT_EQ(armed_after_wake, (std::vector<std::optional<int64_t>>{kStartMs + 5}));
  clock_.advance_ms(5);
  RunUntil([&] { return armed_after_wake.size() == 2; });
  EXPECT_EQ(armed_after_wake.back(), kStartMs + 9);
  EXPECT_EQ(hand_overs_before.back(), 1u);  // after the hand-over of token 1
  clock_.advance_ms(4);
  RunUntil([&] { return armed_after_wake.size() == 3; });
  EXPECT_EQ(armed_after_wake.back(), std::nullopt);  // nothing waits
  EXPECT_EQ(hand_overs_before.back(), 2u);
}

// WakesWithin reads the steady clock the asio timer waits on: a wall clock stepped forward does
// not bring an armed wake-up closer.
TEST_F(DueTimerTest, WakesWithinGoesByTheSteadyClockNotTheWallClock) {
  using std::chrono::milliseconds;
  DueTimer timer(io_, clock_, 1, Record());
  EXPECT_FALSE(timer.WakesWithin(milliseconds(10)));  // not armed
  timer.Schedule(kStartMs + 60'000, 1);
  EXPECT_FALSE(timer.WakesWithin(milliseconds(10)));
  clock_.set_ms(kStartMs + 59'995);  // stepped: armed_at_ms() is 5 ms away, the wake-up is not
  EXPECT_FALSE(timer.WakesWithin(milliseconds(10)));
  timer.Schedule(kStartMs + 59'999, 2);  // re-armed earlier, 4 ms from the stepped clock
  EXPECT_TRUE(timer.WakesWithin(milliseconds(10)));
  timer.Pause();
  EXPECT_FALSE(timer.WakesWithin(milliseconds(10)));
}

}  // namespace
}  // namespace delaybridge::plugin
