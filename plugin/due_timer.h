// DueTimer: the delivery thread's timer service. It keeps 64-bit tokens (PendingDeliveries
// slab tokens) in a TimingWheel, sleeps on one boost::asio::steady_timer of its owner's
// io_context until the earliest deadline, and when it wakes, advances the wheel to the clock
// (core/clock.h) and hands every token that fell due to its callback in one batch. The wheel
// only orders deadlines; this class supplies the thread and the clock, as Kafka's SystemTimer
// does for its TimingWheel.
//
// Arming: the asio timer waits for the wheel's next_deadline_ms() (the earliest deadline rounded
// up to its tick, so one wake-up fires the whole tick), is re-armed earlier when an earlier
// token is scheduled, and is not armed at all while the wheel is empty: nothing ticks. The wait
// is computed from the clock's reading, so a token is handed over at its deadline as the clock
// tells it; a wake-up that finds nothing due (its earliest token was cancelled) re-arms.
//
// Tokens are handed over at the clock reading of a wake-up (or of a HandOverDueIfLate call),
// never before their deadline; tokens due in one tick come in the order they were scheduled. A
// token scheduled from the callback is never handed over by the same call, even when due: it
// waits for the next wake-up or HandOverDueIfLate, so a callback that schedules what is due
// again cannot loop.
//
// After every wake-up of the asio timer (once it has handed over what fell due and re-armed; a
// wake-up that was already queued when Pause came does neither) it calls its after-wake
// callback, if it has one: the owner does there what can wait for the thread's next wake-up (the
// Deliverer takes the records handed over and its producer's reports), so that nothing else has
// to wake the thread for it.
//
// Pause/Resume: while paused nothing is handed over and the asio timer is not armed; Resume
// hands over what fell due meanwhile and arms again. (exactly_once holds deliveries while the
// owner computes what a transaction commits.)
//
// Thread-safety: none. Every method and the callback run on the io_context's thread (the
// delivery thread), or on the owner's thread while that io_context is not running.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/timing_wheel.h"

namespace delaybridge::plugin {

class DueTimer {
 public:
  // The tokens that fell due, in deadline order, and the clock reading they fell due at.
  using OnDue = std::function<void(const std::vector<uint64_t>& tokens, int64_t now_ms)>;

  using AfterWake = std::function<void()>;

  // tick_ms >= 1: the wheel's granularity (Options::tick_ms). Starts running, not paused.
  // after_wake may be empty.
  DueTimer(boost::asio::io_context& io, const Clock& clock, int64_t tick_ms, OnDue on_due,
           AfterWake after_wake = {});
  DueTimer(const DueTimer&) = delete;
  DueTimer& operator=(const DueTimer&) = delete;

  // Hands token over at deadline_ms (at the next turn if that has passed). The handle cancels
  // it; it stays valid until the token is handed over or cancelled.
  TimerHandle Schedule(int64_t deadline_ms, uint64_t token);
  // False when the token was handed over or cancelled already.
  bool Cancel(TimerHandle handle);

  // Hands over everything due now, paused or not (the timer stays paused).
  void HandOverDue();
  // Hands over what is due now unless paused or nothing is due yet: for a long job on the
  // delivery thread, which would otherwise hold the wake-up back until it ends. True when it
  // handed over (the callback may have run).
  bool HandOverDueIfLate();
  // Hands over nothing until Resume, and stops waiting.
  void Pause();
  // Hands over everything due now and arms the asio timer for the rest.
  void Resume();

  // The earliest deadline rounded up to its tick (TimingWheel::next_deadline_ms), or nullopt.
  std::optional<int64_t> next_deadline_ms() const { return wheel_.next_deadline_ms(); }
  // When the asio timer is set to wake up, as a clock reading; nullopt while it is not armed.
  std::optional<int64_t> armed_at_ms() const { return armed_at_ms_; }
  // Whether the asio timer is armed to expire within `within` from now, by the steady clock it
  // waits on: unlike armed_at_ms(), right after the wall clock stepped too.
  bool WakesWithin(std::chrono::milliseconds within) const;
  size_t size() const { return wheel_.size(); }  // tokens waiting

 private:
  // Arms the asio timer for the wheel's next deadline unless it is armed for one at least as
  // early already.
  void Arm();
  void OnWakeUp();

  const Clock& clock_;
  OnDue on_due_;
  AfterWake after_wake_;
  TimingWheel wheel_;
  boost::asio::steady_timer timer_;
  std::optional<int64_t> armed_at_ms_;  // set while the asio timer waits
  bool paused_ = false;
};

}  // namespace delaybridge::plugin
