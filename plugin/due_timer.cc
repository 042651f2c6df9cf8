#include "plugin/due_timer.h"

#include <algorithm>
#include <chrono>

namespace delaybridge::plugin {

DueTimer::DueTimer(boost::asio::io_context& io, const Clock& clock, int64_t tick_ms, OnDue on_due,
                   AfterWake after_wake)
    : clock_(clock),
      on_due_(std::move(on_due)),
      after_wake_(std::move(after_wake)),
      wheel_(tick_ms, clock.now_ms()),
      timer_(io) {}

TimerHandle DueTimer::Schedule(int64_t deadline_ms, uint64_t token) {
  const TimerHandle handle = wheel_.schedule(deadline_ms, token);
  // Armed for this deadline or an earlier one: that wake-up comes first anyway (an armed
  // wake-up is never later than the wheel's next deadline, and a deadline rounds up to its tick,
  // never down). Most records are scheduled behind it (a preload slice is thousands), and the
  // wheel's next deadline is not free to compute.
  if (!armed_at_ms_ || deadline_ms < *armed_at_ms_) Arm();
  return handle;
}

bool DueTimer::Cancel(TimerHandle handle) { return wheel_.cancel(handle); }

bool DueTimer::WakesWithin(std::chrono::milliseconds within) const {
  return armed_at_ms_ && timer_.expiry() <= std::chrono::steady_clock::now() + within;
}

void DueTimer::HandOverDue() {
  const int64_t now_ms = clock_.now_ms();
  // Collected first: the callback may schedule (a retry, a record the wheel fired a tick early),
  // and what it schedules waits for the next turn.
  std::vector<uint64_t> due;
  wheel_.advance(now_ms, [&due](uint64_t token, int64_t) { due.push_back(token); });
  if (!due.empty()) on_due_(due, now_ms);
}

bool DueTimer::HandOverDueIfLate() {
  if (paused_) return false;
  const std::optional<int64_t> next_ms = wheel_.next_deadline_ms();
  if (!next_ms || *next_ms > clock_.now_ms()) return false;
  HandOverDue();
  return true;
}

void DueTimer::Pause() {
  paused_ = true;
  timer_.cancel();
  armed_at_ms_.reset();
}

void DueTimer::Resume() {
  paused_ = false;
  HandOverDue();
  Arm();
}

void DueTimer::Arm() {
  if (paused_) return;  // Resume arms it
  const std::optional<int64_t> next_ms = wheel_.next_deadline_ms();
  if (!next_ms) return;
  if (armed_at_ms_ && *armed_at_ms_ <= *next_ms) return;  // already armed earlier
  armed_at_ms_ = *next_ms;
  const int64_t wait_ms = std::max<int64_t>(0, *next_ms - clock_.now_ms());
  timer_.expires_after(std::chrono::milliseconds(wait_ms));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed for an earlier deadline, paused, or destroyed
    OnWakeUp();
  });
}

void DueTimer::OnWakeUp() {
  armed_at_ms_.reset();
  if (!paused_) {
    HandOverDue();
    Arm();
  }
  if (after_wake_) after_wake_();
}

}  // namespace delaybridge::plugin
