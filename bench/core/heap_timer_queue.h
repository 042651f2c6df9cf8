// HeapTimerQueue: the textbook timer queue, a binary min-heap of (deadline, timer) with lazy
// cancel: cancel() only bumps the timer's generation, and stale heap items are dropped when
// they reach the top (or all at once when they outnumber the live ones, so the heap stays
// O(pending)). A benchmark baseline for TimingWheel, not used by DelayBridge.
//
// Thread-safety: none. Callbacks must not call back into the queue.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace delaybridge::bench {

class HeapTimerQueue {
 public:
  struct Handle {
    uint32_t index;
    uint32_t generation;
  };

  Handle schedule(int64_t deadline_ms, uint64_t payload) {
    uint32_t index;
    if (free_.empty()) {
      index = static_cast<uint32_t>(timers_.size());
      timers_.push_back({0, 0});
    } else {
      index = free_.back();
      free_.pop_back();
    }
    timers_[index].payload = payload;
    heap_.push_back({deadline_ms, index, timers_[index].generation});
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    ++live_;
    return {index, timers_[index].generation};
  }

  bool cancel(Handle handle) {
    if (handle.index >= timers_.size() || timers_[handle.index].generation != handle.generation) {
      return false;
    }
    release(handle.index);
    --live_;
    if (heap_.size() > 2 * live_ + 1024) drop_stale_items();
    return true;
  }

  template <typename OnExpire>
  size_t advance(int64_t now_ms, OnExpire&& on_expire) {
    size_t fired = 0;
    while (!heap_.empty() && heap_.front().deadline_ms <= now_ms) {
      const Item item = heap_.front();
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      heap_.pop_back();
      if (timers_[item.index].generation != item.generation) continue;  // cancelled
      const uint64_t payload = timers_[item.index].payload;
      release(item.index);
      --live_;
      on_expire(payload, item.deadline_ms);
      ++fired;
    }
    return fired;
  }

  size_t size() const { return live_; }

 private:
  struct Item {
    int64_t deadline_ms;
    uint32_t index;
    uint32_t generation;
    bool operator>(const Item& other) const { return deadline_ms > other.deadline_ms; }
  };
  struct Timer {
    uint64_t payload;
    uint32_t generation;
  };

  void release(uint32_t index) {
    ++timers_[index].generation;
    free_.push_back(index);
  }

  void drop_stale_items() {
    std::erase_if(
        heap_, [&](const Item& item) { return timers_[item.index].generation != item.generation; });
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  std::vector<Item> heap_;
  std::vector<Timer> timers_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

}  // namespace delaybridge::bench
