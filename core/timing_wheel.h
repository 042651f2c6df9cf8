// TimingWheel: an in-memory hierarchical timing wheel holding up to millions of pending
// deadlines, with O(1) schedule and cancel and no work while nothing is due.
//
// API CONTRACT (fixed: the bridge is written against it; the implementation may add private
// members and a class comment with a worked example, but keeps these signatures):
//
// Thread-safety: none. One owner thread calls every method.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace delaybridge {

// Identifies one scheduled timer. Stale handles (fired, cancelled, slot reused) are detected
// through the generation counter and make cancel() return false.
struct TimerHandle {
  uint32_t index = UINT32_MAX;  // slot in the wheel's entry slab
  uint32_t generation = 0;      // must match the slot's generation to be live
  bool valid() const { return index != UINT32_MAX; }
};

class TimingWheel {
 public:
  // tick_ms >= 1: deadlines are kept at this granularity. start_ms: the wheel's current time.
  TimingWheel(int64_t tick_ms, int64_t start_ms);

  // Schedules payload to expire at deadline_ms. A deadline at or before the current time
  // fires on the next advance(). O(1), no heap allocation unless the slab grows.
  TimerHandle schedule(int64_t deadline_ms, uint64_t payload);

  // Cancels a pending timer. Returns false when the timer already fired, was already
  // cancelled, or the handle is stale. Safe from inside an on_expire callback. O(1).
  bool cancel(TimerHandle handle);

  // The time at which the earliest pending timer becomes due (its deadline rounded up to the
  // tick that contains it), or nullopt when nothing is pending. The caller sleeps until then.
  std::optional<int64_t> next_deadline_ms() const;

  // Moves the wheel's time to now_ms and calls on_expire(uint64_t payload, int64_t
  // deadline_ms) for every timer whose deadline <= now_ms, in deadline order at tick
  // granularity. Jumps over empty slots. schedule()/cancel() may be called from on_expire;
  // a timer scheduled there with a deadline <= now_ms fires in this same call.
  // Returns the number of timers fired.
  template <typename OnExpire>
  size_t advance(int64_t now_ms, OnExpire&& on_expire);

  size_t size() const;       // pending timers
  bool empty() const { return size() == 0; }
  int64_t tick_ms() const;
  int64_t now_ms() const;    // the wheel's current time (start_ms, then the last advance)
};

}  // namespace delaybridge
