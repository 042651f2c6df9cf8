// TimingWheel: an in-memory hierarchical timing wheel holding up to millions of pending
// deadlines, with O(1) schedule and cancel and no work while nothing is due.
//
// Thread-safety: none. One owner thread calls every method.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "core/wheel_level.h"

namespace delaybridge {

// Identifies one scheduled timer. Stale handles (fired, cancelled, slot reused) are detected
// through the generation counter and make cancel() return false.
struct TimerHandle {
  uint32_t index = UINT32_MAX;  // slot in the wheel's entry slab
  uint32_t generation = 0;      // must match the slot's generation to be live
  bool valid() const { return index != UINT32_MAX; }
};

// Time is counted in ticks of tick_ms since start_ms; a deadline belongs to the tick that
// contains it (tick = floor((deadline_ms - start_ms) / tick_ms)). The wheel has 11 levels of
// 64 slots (tokio's layout, stretched to cover every 64-bit tick); slot s of level L holds the
// timers of 64^L consecutive ticks. With tick_ms = 1:
//
//   level  slot width     level span           level  slot width     level span
//     0    1 ms           64 ms                  3    262 s          4.7 h
//     1    64 ms          4.1 s                  4    4.7 h          12.4 days
//     2    4.1 s          262 s                  5    12.4 days      2.2 years
//   ... level 6 spans 139 years; levels 7-10 reach the end of int64 milliseconds.
//
// A timer goes to the lowest level whose span, aligned on the current tick, contains it: the
// highest base-64 digit in which its tick differs from the current tick `elapsed`. Worked
// example, elapsed = 100 = (1, 36) in base 64 (level 1 digit 1, level 0 digit 36):
//
//   schedule tick 120  = (1, 56)      -> differs in digit 0   -> level 0, slot 56
//   schedule tick 130  = (2, 2)       -> differs in digit 1   -> level 1, slot 2 (ticks 128-191)
//   schedule tick 5000 = (1, 14, 8)   -> differs in digit 2   -> level 2, slot 1 (ticks 4096-8191)
//
//   level 0  [........................................................X.......]  occupancy bit 56
//   level 1  [..X.............................................................]  occupancy bit 2
//   level 2  [.X..............................................................]  occupancy bit 1
//
// Each level keeps a uint64_t occupancy mask, so the next non-empty slot is found with one
// count-trailing-zeros per level, lowest level first (a lower level's slots all end before the
// next slot of any higher level begins). advance(now_ms) therefore jumps: from tick 100 to
// tick 120 (fires the timer), then to tick 128, where level 1 slot 2 is cascaded: its timers are
// re-inserted relative to the new elapsed tick (tick 130 = (2, 2) now lands in level 0 slot 2),
// then to 130 (fires), then to 4096 (cascades level 2 slot 1 into level 1 slot 14), then to
// 4992 (cascades into level 0 slot 8), then to 5000 (fires). Empty ticks are never visited.
//
// Firing is exact: advance(now_ms) fires every timer whose deadline_ms <= now_ms, tick by tick
// in deadline order; timers within one tick fire in the order they were scheduled. When now_ms
// falls inside a tick, the timers of that tick that are not yet due stay in its slot.
//
// Storage: timers live in a slab (std::vector<Entry>) with a free list. A slot of level 0 is an
// intrusive doubly-linked list of uint32_t slab indices. A coarse slot (level 1 and up) is an
// array of *places* in the order the timers joined it: a slab index and the low 32 bits of the
// deadline. Cancel empties the timer's place (its entry knows where it is); the cascade skips
// empty places. A coarse slot of a busy wheel holds seconds of timers (level 2 covers 4.1 s with
// 1 ms ticks: 400,000 timers at 100,000 a second), all moved down at once when the wheel reaches
// it, long after they were scheduled and out of the CPU's caches. Walking a linked list waited
// for one cache miss per timer; the array tells where each timer goes without reading its entry
// (the slot's span fixes the deadline's high bits), so the cascade only writes the entries' new
// places, and those writes do not wait for each other.
//
// Schedule and cancel take amortized O(1) time. An entry is 32 bytes (deadline 8, payload 8,
// links 8, generation 4, list id 4) and the slab grows by 1.5x; a timer in a coarse slot adds 8
// bytes of its array, 16 while the array has grown by doubling. So a pending timer costs 32-64
// bytes including the caller's payload, plus the places of cancelled timers in coarse slots until
// they are half of their slot's array (it is then compacted) or all of it (it is then emptied, and
// freed unless it is small). The slab never shrinks: after a burst, freed entries are reused. A
// cascaded slot's array is kept for the next slot of its level that fills, so a slot of 400,000
// timers does not grow its array from nothing, copying it on the way, every time. memory_bytes()
// reports the total.
//
// Thread-safety: none. One owner thread calls every method. on_expire runs on that thread,
// inside advance(), and must not throw or call advance().
class TimingWheel {
 public:
  // tick_ms >= 1: deadlines are kept at this granularity. start_ms: the wheel's current time.
  // A tick_ms < 1 is a programming error and aborts; use create() for untrusted input.
  TimingWheel(int64_t tick_ms, int64_t start_ms);

  // Validating factory: InvalidArgument when tick_ms < 1.
  static Result<TimingWheel> create(int64_t tick_ms, int64_t start_ms);

  // Schedules payload to expire at deadline_ms. A deadline at or before the current time
  // fires on the next advance(). Amortized O(1); allocates only when the slab or a coarse
  // slot's array grows.
  TimerHandle schedule(int64_t deadline_ms, uint64_t payload);

  // Cancels a pending timer. Returns false when the timer already fired, was already
  // cancelled, or the handle is stale. Safe from inside an on_expire callback. Amortized O(1)
  // (a coarse slot's array is compacted once half of it is cancelled places).
  bool cancel(TimerHandle handle);

  // The time to sleep until: the earliest pending deadline rounded up to the tick boundary at
  // or after it (so one wake-up fires the whole tick), or nullopt when nothing is pending.
  // Never later than that. It can be earlier when the earliest timer of a slot was cancelled;
  // advancing to it then fires nothing and the next call is exact again. O(levels).
  std::optional<int64_t> next_deadline_ms() const;

  // Moves the wheel's time to now_ms and calls on_expire(uint64_t payload, int64_t
  // deadline_ms) for every timer whose deadline <= now_ms, in deadline order at tick
  // granularity. Jumps over empty slots. schedule()/cancel() may be called from on_expire;
  // a timer scheduled there with a deadline <= now_ms fires in this same call.
  // A now_ms earlier than now_ms() does not move time back (it only fires overdue timers).
  // Returns the number of timers fired.
  template <typename OnExpire>
  size_t advance(int64_t now_ms, OnExpire&& on_expire);

  size_t size() const { return size_; }  // pending timers
  bool empty() const { return size() == 0; }
  int64_t tick_ms() const { return tick_ms_; }
  // The wheel's current time: start_ms, then the latest advance() target.
  int64_t now_ms() const { return now_ms_; }

  // Pre-sizes the slab for `timers` pending timers, so schedule() never allocates below that.
  void reserve(size_t timers);

  // Bytes held by the wheel: the object plus the slab's capacity.
  size_t memory_bytes() const;

 private:
  // One timer, or a free slab slot. 32 bytes; see the class comment.
  struct Entry {
    int64_t deadline_ms;
    uint64_t payload;
    // In a level-0 slot or kKeptList: slab index of the previous entry, or kNil at the head.
    // In a coarse slot: the entry's place in the slot's array.
    uint32_t prev;
    uint32_t next;        // slab index, or kNil at the tail; the free list links through it
    uint32_t generation;  // bumped when the entry is freed, so old handles go stale
    uint32_t list;        // which list holds it: a wheel slot, kKeptList or kFreeList
  };
  static_assert(sizeof(Entry) == 32, "the memory budget per timer is 32 bytes");

  static constexpr uint32_t kNil = UINT32_MAX;
  // Lists 0 .. kWheelLists-1 are the slots (level * 64 + slot). kKeptList parks the timers of
  // the current tick that are not yet due while advance() drains that tick's slot.
  static constexpr uint32_t kWheelLists = wheel::kLevels * wheel::kSlotsPerLevel;
  // Lists below this are level 0's linked slots; from it to kWheelLists, the coarse slots.
  static constexpr uint32_t kFirstCoarseList = wheel::kSlotsPerLevel;
  // A timer in a coarse slot: its slab index (kNil once cancelled) and the low 32 bits of its
  // deadline.
  struct Place {
    uint32_t index;
    uint32_t deadline_low;
  };
  static constexpr uint32_t kKeptList = kWheelLists;
  static constexpr uint32_t kLists = kWheelLists + 1;
  static constexpr uint32_t kFreeList = UINT32_MAX;

  // The tick that contains deadline_ms, never before the current tick (overdue timers join it).
  uint64_t tick_for(int64_t deadline_ms) const;
  // deadline_ms rounded up to a tick boundary, saturating at INT64_MAX.
  int64_t round_up_to_tick_ms(int64_t deadline_ms) const;
  uint32_t list_for(uint64_t tick) const;
  static bool is_coarse(uint32_t list) { return list >= kFirstCoarseList && list < kWheelLists; }
  void insert(uint32_t index);
  void insert(uint32_t index, int64_t deadline_ms);  // deadline_ms: the entry's
  // link_back() or an append to a coarse slot's array, plus occupancy.
  void link_into_slot(uint32_t list, uint32_t index, int64_t deadline_ms);
  void link_back(uint32_t list, uint32_t index);
  void unlink(uint32_t index);  // from a linked list (level 0, kKeptList)
  uint32_t allocate();
  [[gnu::noinline]] uint32_t grow_slab();  // allocate() when the free list is empty
  // Whole ticks in a duration.
  uint64_t ticks_in(uint64_t duration_ms) const {
    return tick_shift_ >= 0 ? duration_ms >> tick_shift_
                            : duration_ms / static_cast<uint64_t>(tick_ms_);
  }
  void release(uint32_t index);
  // Counts a cancelled timer's place in a coarse slot: frees the slot once every place is
  // empty, compacts its array once at least half is.
  void count_stale_place(uint32_t list);
  // The array a coarse slot that became occupied fills: the kept one of its level, if any.
  void take_kept_array(uint32_t list);
  static constexpr uint32_t kMinStalePlacesToCompact = 64;
  static constexpr size_t kMaxEmptyArrayKept = 64;  // places of an emptied slot's array

  // advance() steps, in the order the template calls them.
  void begin_advance(int64_t now_ms);
  uint32_t pop_current_tick();  // the next timer of the current tick's slot, or kNil
  void keep_for_later(uint32_t index);
  void restore_kept();  // links the kept timers back into the current tick's slot
  // Moves elapsed_ticks_ to the next occupied tick <= the advance target, cascading coarse
  // slots on the way; returns false (and moves to the target) when there is none.
  bool step_to_next_tick();
  bool step_to_coarse_slot();  // step_to_next_tick() when level 0 is empty ahead
  // Re-inserts every timer of a coarse slot whose first tick is now the current tick.
  void cascade(uint32_t list);
  void end_advance();

  int64_t tick_ms_;
  int tick_shift_;             // log2(tick_ms_) when tick_ms_ is a power of two, else -1
  int64_t start_ms_;           // tick 0 begins here
  int64_t now_ms_;             // last advance() target, or start_ms_
  uint64_t elapsed_ticks_;     // the current tick; every pending timer's tick is >= it
  uint64_t target_ticks_ = 0;  // during advance(): the tick that contains now_ms_
  bool advancing_ = false;
  size_t size_ = 0;
  uint32_t free_head_ = kNil;
  std::vector<Entry> entries_;
  std::array<uint32_t, kLists> heads_;  // of the linked lists (the coarse slots' are unused)
  std::array<uint32_t, kLists> tails_;
  std::array<std::vector<Place>, kWheelLists - kFirstCoarseList> coarse_;
  std::array<uint32_t, kWheelLists - kFirstCoarseList> stale_places_{};  // cancelled since
  // Per coarse level: the array of the slot it cascaded last, emptied, for the next one.
  std::array<std::vector<Place>, wheel::kLevels> kept_arrays_;
  std::array<uint64_t, wheel::kLevels> occupied_{};  // bit s of level L: slot s is non-empty
  // Smallest deadline ever linked into each slot since it was last empty: a lower bound that
  // is exact unless that timer was cancelled. Read only while the slot is occupied.
  std::array<int64_t, kWheelLists> slot_min_deadline_ms_;
};

template <typename OnExpire>
size_t TimingWheel::advance(int64_t now_ms, OnExpire&& on_expire) {
  begin_advance(now_ms);
  size_t fired = 0;
  do {
    // Drain the current tick. Timers may be linked into it while this runs (a callback
    // scheduling an overdue timer), so the loop pops until the slot is empty.
    for (uint32_t index = pop_current_tick(); index != kNil; index = pop_current_tick()) {
      const Entry& entry = entries_[index];
      if (entry.deadline_ms > now_ms_) {
        // Same tick, later millisecond: due in a later advance().
        keep_for_later(index);
        continue;
      }
      const uint64_t payload = entry.payload;
      const int64_t deadline_ms = entry.deadline_ms;
      release(index);  // before the callback, so cancel() of this handle returns false
      on_expire(payload, deadline_ms);
      ++fired;
    }
    if (heads_[kKeptList] != kNil) restore_kept();
  } while (step_to_next_tick());
  end_advance();
  return fired;
}

// The small steps of advance() live here so they inline into every advance() instantiation.

inline void TimingWheel::begin_advance(int64_t now_ms) {
  assert(!advancing_ && "advance() called from on_expire");
  advancing_ = true;
  now_ms_ = std::max(now_ms_, now_ms);
  const uint64_t since_start_ms = static_cast<uint64_t>(now_ms_) - static_cast<uint64_t>(start_ms_);
  target_ticks_ = ticks_in(since_start_ms);
}

inline bool TimingWheel::step_to_next_tick() {
  const int slot =
      wheel::next_occupied_slot_after(occupied_[0], wheel::slot_for(elapsed_ticks_, 0));
  if (slot < 0) return step_to_coarse_slot();
  // A timer later in level 0 is the earliest of all: no coarse slot can come before it.
  const uint64_t tick = wheel::slot_start_tick(elapsed_ticks_, 0, static_cast<uint32_t>(slot));
  elapsed_ticks_ = std::min(tick, target_ticks_);
  return tick <= target_ticks_;
}

inline uint32_t TimingWheel::pop_current_tick() {
  const uint32_t list = wheel::slot_for(elapsed_ticks_, 0);
  const uint32_t index = heads_[list];
  if (index == kNil) return kNil;
  // unlink() of a list head, spelled out for the hot path.
  const uint32_t next = entries_[index].next;
  heads_[list] = next;
  if (next == kNil) {
    tails_[list] = kNil;
    occupied_[0] &= ~(uint64_t{1} << list);
  } else {
    entries_[next].prev = kNil;
  }
  return index;
}

inline void TimingWheel::release(uint32_t index) {
  Entry& entry = entries_[index];
  ++entry.generation;
  entry.list = kFreeList;
  entry.next = free_head_;  // the free list is singly linked
  free_head_ = index;
  --size_;
}

inline void TimingWheel::end_advance() { advancing_ = false; }

}  // namespace delaybridge
