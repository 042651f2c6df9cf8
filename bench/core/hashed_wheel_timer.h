// HashedWheelTimer: Netty's design, written small as a benchmark baseline. One wheel of 512
// buckets (Netty's default ticksPerWheel) of tick_ms each; a timer goes to bucket
// (deadline tick mod 512) with the number of whole turns still to wait. Every tick visits one
// bucket and every timer in it: due ones fire, the others count one turn down. So advancing
// costs one bucket visit per tick even when nothing is due. Not used by DelayBridge.
//
// Thread-safety: none. Callbacks must not call back into the timer.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace delaybridge::bench {

class HashedWheelTimer {
 public:
  static constexpr uint32_t kBuckets = 512;

  struct Handle {
    uint32_t index;
    uint32_t generation;
  };

  HashedWheelTimer(int64_t tick_ms, int64_t start_ms) : tick_ms_(tick_ms), start_ms_(start_ms) {
    heads_.fill(kNil);
  }

  Handle schedule(int64_t deadline_ms, uint64_t payload) {
    const uint32_t index = allocate();
    Entry& entry = entries_[index];
    entry.deadline_ms = deadline_ms;
    entry.payload = payload;
    // A deadline already passed goes to the next bucket to be visited, like Netty.
    const int64_t tick = std::max((deadline_ms - start_ms_) / tick_ms_, next_tick_);
    entry.remaining_rounds = (tick - next_tick_) / kBuckets;
    link(static_cast<uint32_t>(tick % kBuckets), index);
    ++size_;
    return {index, entry.generation};
  }

  bool cancel(Handle handle) {
    if (handle.index >= entries_.size()) return false;
    const Entry& entry = entries_[handle.index];
    if (entry.bucket == kFree || entry.generation != handle.generation) return false;
    unlink(handle.index);
    release(handle.index);
    return true;
  }

  // Visits every bucket between the last advance and now_ms, one per tick.
  template <typename OnExpire>
  size_t advance(int64_t now_ms, OnExpire&& on_expire) {
    size_t fired = 0;
    const int64_t target_tick = (now_ms - start_ms_) / tick_ms_;
    for (; next_tick_ <= target_tick; ++next_tick_) {
      uint32_t index = heads_[next_tick_ % kBuckets];
      while (index != kNil) {
        Entry& entry = entries_[index];
        const uint32_t next = entry.next;
        if (entry.remaining_rounds > 0) {
          --entry.remaining_rounds;
        } else {
          const uint64_t payload = entry.payload;
          const int64_t deadline_ms = entry.deadline_ms;
          unlink(index);
          release(index);
          on_expire(payload, deadline_ms);
          ++fired;
        }
        index = next;
      }
    }
    return fired;
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  static constexpr uint32_t kFree = UINT32_MAX;
  struct Entry {
    int64_t deadline_ms;
    uint64_t payload;
    int64_t remaining_rounds;
    uint32_t prev;
    uint32_t next;
    uint32_t generation;
    uint32_t bucket;
  };

  uint32_t allocate() {
    if (free_head_ == kNil) {
      entries_.push_back({0, 0, 0, kNil, kNil, 0, kFree});
      return static_cast<uint32_t>(entries_.size() - 1);
    }
    const uint32_t index = free_head_;
    free_head_ = entries_[index].next;
    return index;
  }

  void release(uint32_t index) {
    Entry& entry = entries_[index];
    ++entry.generation;
    entry.bucket = kFree;
    entry.next = free_head_;
    free_head_ = index;
    --size_;
  }

  void link(uint32_t bucket, uint32_t index) {
    Entry& entry = entries_[index];
    entry.bucket = bucket;
    entry.prev = kNil;
    entry.next = heads_[bucket];
    if (heads_[bucket] != kNil) entries_[heads_[bucket]].prev = index;
    heads_[bucket] = index;
  }

  void unlink(uint32_t index) {
    const Entry& entry = entries_[index];
    if (entry.prev == kNil) {
      heads_[entry.bucket] = entry.next;
    } else {
      entries_[entry.prev].next = entry.next;
    }
    if (entry.next != kNil) entries_[entry.next].prev = entry.prev;
  }

  int64_t tick_ms_;
  int64_t start_ms_;
  int64_t next_tick_ = 0;  // the next tick whose bucket advance() visits
  size_t size_ = 0;
  uint32_t free_head_ = kNil;
  std::vector<Entry> entries_;
  std::array<uint32_t, kBuckets> heads_;
};

}  // namespace delaybridge::bench
