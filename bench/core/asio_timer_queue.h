// AsioTimerQueue: Boost.Asio's own timer queue (boost::asio::detail::timer_queue, the binary
// heap behind every steady_timer and deadline_timer) driven directly, without an io_context,
// so the benchmark measures the queue and not the reactor. Each timer is a per_timer_data plus
// one no-op wait_op, kept at a stable address in a std::deque. Asio asks its time traits for
// "now"; here that is a simulated clock set by advance(). A benchmark baseline, not used by
// DelayBridge.
//
// Thread-safety: none, and at most one AsioTimerQueue per thread runs advance() at a time (the
// simulated clock is per thread). Callbacks must not call back into the queue.
#pragma once

#include <boost/asio/detail/op_queue.hpp>
#include <boost/asio/detail/timer_queue.hpp>
#include <boost/asio/detail/wait_op.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace delaybridge::bench {

// Time traits over int64 milliseconds whose now() is the simulated clock.
struct SimulatedMillisecondTraits {
  using time_type = int64_t;
  using duration_type = int64_t;
  static inline thread_local int64_t simulated_now_ms = 0;
  static time_type now() { return simulated_now_ms; }
  static time_type add(time_type t, duration_type d) { return t + d; }
  static duration_type subtract(time_type a, time_type b) { return a - b; }
  static bool less_than(time_type a, time_type b) { return a < b; }
  static boost::posix_time::time_duration to_posix_duration(duration_type d) {
    return boost::posix_time::milliseconds(d);
  }
};

class AsioTimerQueue {
 public:
  struct Handle {
    uint32_t index;
    uint32_t generation;
  };

  Handle schedule(int64_t deadline_ms, uint64_t payload) {
    uint32_t index;
    if (free_.empty()) {
      index = static_cast<uint32_t>(timers_.size());
      timers_.emplace_back(index);
    } else {
      index = free_.back();
      free_.pop_back();
    }
    Timer& timer = timers_[index];
    timer.payload = payload;
    timer.deadline_ms = deadline_ms;
    timer.pending = true;
    queue_.enqueue_timer(deadline_ms, timer.data, &timer.op);
    ++size_;
    return {index, timer.generation};
  }

  bool cancel(Handle handle) {
    if (handle.index >= timers_.size()) return false;
    Timer& timer = timers_[handle.index];
    if (!timer.pending || timer.generation != handle.generation) return false;
    boost::asio::detail::op_queue<boost::asio::detail::operation> cancelled;
    queue_.cancel_timer(timer.data, cancelled);
    while (cancelled.front() != nullptr) cancelled.pop();  // the op is part of the timer
    release(handle.index);
    return true;
  }

  template <typename OnExpire>
  size_t advance(int64_t now_ms, OnExpire&& on_expire) {
    SimulatedMillisecondTraits::simulated_now_ms = now_ms;
    boost::asio::detail::op_queue<boost::asio::detail::operation> ready;
    queue_.get_ready_timers(ready);
    size_t fired = 0;
    while (boost::asio::detail::operation* op = ready.front()) {
      ready.pop();
      const uint32_t index = static_cast<NoopWaitOp*>(op)->index;
      const Timer& timer = timers_[index];
      const uint64_t payload = timer.payload;
      const int64_t deadline_ms = timer.deadline_ms;
      release(index);
      on_expire(payload, deadline_ms);
      ++fired;
    }
    return fired;
  }

  size_t size() const { return size_; }

 private:
  // The completion Asio would post to an io_context; the queue only hands it back.
  struct NoopWaitOp : boost::asio::detail::wait_op {
    explicit NoopWaitOp(uint32_t timer_index)
        : wait_op(&NoopWaitOp::complete), index(timer_index) {}
    static void complete(void*, boost::asio::detail::operation*, const boost::system::error_code&,
                         std::size_t) {}
    uint32_t index;
  };
  struct Timer {
    explicit Timer(uint32_t index) : op(index) {}
    boost::asio::detail::timer_queue<SimulatedMillisecondTraits>::per_timer_data data;
    NoopWaitOp op;
    uint64_t payload = 0;
    int64_t deadline_ms = 0;
    uint32_t generation = 0;
    bool pending = false;
  };

  void release(uint32_t index) {
    Timer& timer = timers_[index];
    timer.pending = false;
    ++timer.generation;
    free_.push_back(index);
    --size_;
  }

  boost::asio::detail::timer_queue<SimulatedMillisecondTraits> queue_;
  std::deque<Timer> timers_;  // stable addresses: the queue points into them
  std::vector<uint32_t> free_;
  size_t size_ = 0;
};

}  // namespace delaybridge::bench
