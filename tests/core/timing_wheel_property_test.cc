// Property test of TimingWheel (core/timing_wheel.h) against a reference model: thousands of
// random sequences of schedule / cancel / advance (also from inside callbacks), deadlines from
// milliseconds to years, several tick sizes. After every step the wheel must agree with the
// model: the same timers fired, never early, none left behind, in tick order (schedule order
// within a tick), and next_deadline_ms() never later than the earliest pending deadline
// rounded up to its tick. Each sequence is seeded; a failure prints the seed and the step.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/timing_wheel.h"

namespace delaybridge {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kYearMs = 365 * 24 * kHourMs;
constexpr int kSequencesPerTick = 3'000;

// How far ahead (or behind) deadlines and advances reach: milliseconds to twelve years.
constexpr int64_t kScalesMs[] = {3, 100, 10'000, kHourMs, 30 * 24 * kHourMs, 12 * kYearMs};

class WheelModel {
 public:
  WheelModel(uint64_t seed, int64_t tick_ms)
      : rng_(seed), tick_ms_(tick_ms), start_ms_(RandomStartMs()), wheel_(tick_ms, start_ms_) {}

  // Runs one random sequence; returns the first disagreement, or "" when there is none.
  std::string Run() {
    const int steps = Uniform(20, 300);
    // Some sequences never cancel, so next_deadline_ms() must be exact in them.
    cancel_percent_ = Uniform(0, 3) == 0 ? 0 : Uniform(5, 30);
    drive_by_next_deadline_ = Uniform(0, 1) == 0;
    for (int step = 0; step < steps && error_.empty(); ++step) {
      const int action = Uniform(0, 99);
      if (action < 45) {
        Schedule();
      } else if (action < 45 + cancel_percent_) {
        CancelRandom();
      } else {
        Advance(drive_by_next_deadline_ ? NextWakeUpMs() : RandomAdvanceMs());
      }
      CheckNextDeadline();
    }
    // Everything still pending, years ahead included, fires once time gets there.
    callbacks_may_act_ = false;
    while (error_.empty() && !pending_.empty()) Advance(NextWakeUpMs());
    if (error_.empty() && !wheel_.empty()) Fail("wheel holds timers the model does not");
    return error_;
  }

 private:
  enum class State { kPending, kFired, kCancelled };
  struct Timer {
    int64_t deadline_ms;
    int64_t scheduled_at_ms;  // the wheel's time when it was scheduled
    uint64_t tick;            // the tick it must fire with: its own, or the current one
    TimerHandle handle;
    State state;
  };

  int64_t RandomStartMs() {
    switch (Uniform(0, 2)) {
      case 0:
        return 0;
      case 1:
        return -Uniform64(0, 10 * kYearMs);
      default:
        return 1'795'000'000'000 + Uniform64(0, kYearMs);
    }
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t Uniform64(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  int64_t RandomScaleMs() { return kScalesMs[Uniform(0, std::size(kScalesMs) - 1)]; }

  uint64_t TickOf(int64_t time_ms) const {
    return time_ms <= start_ms_ ? 0 : static_cast<uint64_t>((time_ms - start_ms_) / tick_ms_);
  }
  int64_t RoundUpToTickMs(int64_t time_ms) const {
    if (time_ms <= start_ms_) return time_ms;
    const int64_t ticks = (time_ms - start_ms_ + tick_ms_ - 1) / tick_ms_;
    return start_ms_ + ticks * tick_ms_;
  }
  // The tick the wheel stands at: the firing timer's inside a callback, else now's.
  uint64_t CurrentTick() const {
    return firing_ ? timers_[*firing_].tick : TickOf(wheel_.now_ms());
  }

  void Fail(const std::string& what) {
    if (!error_.empty()) return;
    std::ostringstream out;
    out << "tick_ms=" << tick_ms_ << " start_ms=" << start_ms_ << " now_ms=" << wheel_.now_ms()
        << ": " << what;
    error_ = out.str();
  }

  void Schedule() {
    const int64_t scale_ms = RandomScaleMs();
    // A quarter of the deadlines are overdue already.
    const int64_t deadline_ms = wheel_.now_ms() + Uniform64(-scale_ms / 3, scale_ms);
    const uint64_t id = timers_.size();
    const TimerHandle handle = wheel_.schedule(deadline_ms, id);
    timers_.push_back({deadline_ms, wheel_.now_ms(), std::max(TickOf(deadline_ms), CurrentTick()),
                       handle, State::kPending});
    pending_.insert({deadline_ms, id});
  }

  void CancelRandom() {
    if (timers_.empty() || Uniform(0, 19) == 0) {
      // A handle the wheel never gave out.
      if (wheel_.cancel(TimerHandle{static_cast<uint32_t>(Uniform(0, 1'000'000)), 12345})) {
        Fail("cancel of a made-up handle returned true");
      }
      return;
    }
    const uint64_t id = Uniform64(0, static_cast<int64_t>(timers_.size()) - 1);
    Timer& timer = timers_[id];
    const bool cancelled = wheel_.cancel(timer.handle);
    if (cancelled != (timer.state == State::kPending)) {
      Fail("cancel of timer " + std::to_string(id) + " returned " + std::to_string(cancelled));
      return;
    }
    if (cancelled) {
      timer.state = State::kCancelled;
      pending_.erase({timer.deadline_ms, id});
      ++cancels_;
    }
  }

  int64_t RandomAdvanceMs() {
    if (Uniform(0, 9) == 0) return wheel_.now_ms() - Uniform64(0, 1'000);  // backwards: no-op
    return wheel_.now_ms() + Uniform64(0, RandomScaleMs());
  }

  int64_t NextWakeUpMs() const {
    const std::optional<int64_t> next_ms = wheel_.next_deadline_ms();
    return next_ms ? std::max(*next_ms, wheel_.now_ms()) : wheel_.now_ms() + 1'000;
  }

  void Advance(int64_t to_ms) {
    const int64_t target_ms = std::max(to_ms, wheel_.now_ms());
    std::optional<std::pair<uint64_t, uint64_t>> last_fired;  // (tick, id)
    size_t fired_in_call = 0;
    const size_t returned = wheel_.advance(to_ms, [&](uint64_t id, int64_t deadline_ms) {
      ++fired_in_call;
      OnFired(id, deadline_ms, target_ms, last_fired);
    });
    if (returned != fired_in_call) Fail("advance() returned a count unlike its callbacks");
    if (wheel_.now_ms() != target_ms) Fail("now_ms() is not the advance target");
    if (!pending_.empty() && pending_.begin()->first <= target_ms) {
      Fail("timer " + std::to_string(pending_.begin()->second) + " with deadline " +
           std::to_string(pending_.begin()->first) + " did not fire by " +
           std::to_string(target_ms));
    }
    if (wheel_.size() != pending_.size()) Fail("size() differs from the model");
  }

  void OnFired(uint64_t id, int64_t deadline_ms, int64_t target_ms,
               std::optional<std::pair<uint64_t, uint64_t>>& last_fired) {
    if (id >= timers_.size() || timers_[id].state != State::kPending) {
      Fail("timer " + std::to_string(id) + " fired but was not pending");
      return;
    }
    Timer& timer = timers_[id];
    if (deadline_ms != timer.deadline_ms) Fail("on_expire got the wrong deadline");
    if (deadline_ms > target_ms) {
      Fail("timer " + std::to_string(id) + " deadline " + std::to_string(deadline_ms) +
           " fired early at " + std::to_string(target_ms));
    }
    // Waking at next_deadline_ms() must never cost more than one tick of delay.
    if (drive_by_next_deadline_ &&
        target_ms - std::max(deadline_ms, timer.scheduled_at_ms) >= tick_ms_) {
      Fail("timer " + std::to_string(id) + " deadline " + std::to_string(deadline_ms) +
           " fired more than one tick late at " + std::to_string(target_ms));
    }
    const std::pair<uint64_t, uint64_t> order{timer.tick, id};
    if (last_fired && order <= *last_fired) {
      Fail("timer " + std::to_string(id) + " (tick " + std::to_string(timer.tick) +
           ") fired after timer " + std::to_string(last_fired->second) + " (tick " +
           std::to_string(last_fired->first) + ")");
    }
    last_fired = order;
    timer.state = State::kFired;
    pending_.erase({deadline_ms, id});
    if (!callbacks_may_act_) return;
    firing_ = id;
    ActInsideCallback(id, target_ms);
    firing_.reset();
  }

  // What a bridge might do when a timer fires: reschedule, cancel a sibling.
  void ActInsideCallback(uint64_t id, int64_t target_ms) {
    const int action = Uniform(0, 9);
    if (action == 0) {
      if (wheel_.cancel(timers_[id].handle)) Fail("a firing timer could cancel itself");
    } else if (action <= 2) {
      CancelRandom();
    } else if (action <= 4) {
      // Schedule around the advance target: some fire in this same call, some later.
      const int64_t deadline_ms = target_ms + Uniform64(-2 * tick_ms_ - 5, 2 * tick_ms_ + 5);
      const uint64_t new_id = timers_.size();
      const TimerHandle handle = wheel_.schedule(deadline_ms, new_id);
      timers_.push_back({deadline_ms, target_ms, std::max(TickOf(deadline_ms), CurrentTick()),
                         handle, State::kPending});
      pending_.insert({deadline_ms, new_id});
    } else if (action == 5) {
      Schedule();
    }
  }

  void CheckNextDeadline() {
    const std::optional<int64_t> next_ms = wheel_.next_deadline_ms();
    if (pending_.empty()) {
      if (next_ms) Fail("next_deadline_ms() is set on an empty wheel");
      return;
    }
    const int64_t expected_ms = RoundUpToTickMs(pending_.begin()->first);
    if (!next_ms) {
      Fail("next_deadline_ms() is empty with timers pending");
    } else if (*next_ms > expected_ms) {
      Fail("next_deadline_ms() " + std::to_string(*next_ms) + " is later than " +
           std::to_string(expected_ms));
    } else if (cancels_ == 0 && *next_ms != expected_ms) {
      Fail("next_deadline_ms() " + std::to_string(*next_ms) + " is not the exact " +
           std::to_string(expected_ms));
    }
  }

  std::mt19937_64 rng_;
  int64_t tick_ms_;
  int64_t start_ms_;
  TimingWheel wheel_;
  std::vector<Timer> timers_;                       // indexed by payload
  std::set<std::pair<int64_t, uint64_t>> pending_;  // (deadline_ms, payload)
  std::optional<uint64_t> firing_;                  // the timer whose callback runs
  int cancel_percent_ = 0;
  int cancels_ = 0;
  bool drive_by_next_deadline_ = false;
  bool callbacks_may_act_ = true;
  std::string error_;
};

class TimingWheelPropertyTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(TimingWheelPropertyTest, AgreesWithTheReferenceModel) {
  const int64_t tick_ms = GetParam();
  for (uint64_t seed = 1; seed <= kSequencesPerTick; ++seed) {
    const std::string error = WheelModel(seed * 1'000'003 + tick_ms, tick_ms).Run();
    ASSERT_EQ(error, "") << "seed " << seed << " (rng seed " << seed * 1'000'003 + tick_ms << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(TickSizes, TimingWheelPropertyTest,
                         ::testing::Values(1, 2, 7, 64, 1'000, 3'600'000),
                         [](const auto& info) { return "tick_" + std::to_string(info.param); });

}  // namespace
}  // namespace delaybridge
