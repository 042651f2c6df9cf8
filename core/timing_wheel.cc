#include "core/timing_wheel.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace delaybridge {

using wheel::kSlotsPerLevel;

TimingWheel::TimingWheel(int64_t tick_ms, int64_t start_ms)
    : tick_ms_(tick_ms),
      // Power-of-two ticks (1 ms above all) divide with a shift: schedule() is hot.
      tick_shift_(tick_ms > 0 && std::has_single_bit(static_cast<uint64_t>(tick_ms))
                      ? std::countr_zero(static_cast<uint64_t>(tick_ms))
                      : -1),
      start_ms_(start_ms),
      now_ms_(start_ms),
      elapsed_ticks_(0) {
  if (tick_ms < 1) {
    // A constructor cannot return a Status; create() is the checked path.
    std::fprintf(stderr, "TimingWheel: tick_ms must be >= 1, got %lld\n",
                 static_cast<long long>(tick_ms));
    std::abort();
  }
  heads_.fill(kNil);
  tails_.fill(kNil);
}

Result<TimingWheel> TimingWheel::create(int64_t tick_ms, int64_t start_ms) {
  if (tick_ms < 1) {
    return Status::InvalidArgument("timing wheel tick_ms must be >= 1, got " +
                                   std::to_string(tick_ms));
  }
  return TimingWheel(tick_ms, start_ms);
}

TimerHandle TimingWheel::schedule(int64_t deadline_ms, uint64_t payload) {
  const uint32_t index = allocate();
  Entry& entry = entries_[index];
  entry.deadline_ms = deadline_ms;
  entry.payload = payload;
  insert(index);
  ++size_;
  return TimerHandle{index, entry.generation};
}

bool TimingWheel::cancel(TimerHandle handle) {
  if (handle.index >= entries_.size()) return false;
  const Entry& entry = entries_[handle.index];
  // Fired or cancelled entries are on the free list or were reused under a newer generation.
  if (entry.list == kFreeList || entry.generation != handle.generation) return false;
  const uint32_t list = entry.list;
  if (is_coarse(list)) {
    coarse_[list - kFirstCoarseList][entry.prev].index = kNil;
  } else {
    unlink(handle.index);
  }
  release(handle.index);
  if (is_coarse(list)) count_stale_place(list);
  return true;
}

void TimingWheel::count_stale_place(uint32_t list) {
  // Timers that are scheduled far ahead and cancelled before they come near (timeouts that do
  // not happen) would otherwise pile up places until their slot is cascaded, maybe days later.
  std::vector<Place>& places = coarse_[list - kFirstCoarseList];
  uint32_t& stale = stale_places_[list - kFirstCoarseList];
  if (++stale == places.size()) {
    // Nothing left to cascade: the slot is empty, and no wake-up is spent on it. A small array
    // stays for the slot's next timer (a timeout scheduled and cancelled over and over).
    places.clear();
    if (places.capacity() > kMaxEmptyArrayKept) std::vector<Place>().swap(places);
    stale = 0;
    occupied_[list / kSlotsPerLevel] &= ~(uint64_t{1} << (list % kSlotsPerLevel));
    return;
  }
  if (stale < kMinStalePlacesToCompact || stale * 2 < places.size()) return;
  size_t kept = 0;
  for (const Place& place : places) {
    if (place.index == kNil) continue;
    entries_[place.index].prev = static_cast<uint32_t>(kept);
    places[kept++] = place;
  }
  places.resize(kept);
  places.shrink_to_fit();
  stale = 0;
}

std::optional<int64_t> TimingWheel::next_deadline_ms() const {
  for (int level = 0; level < wheel::kLevels; ++level) {
    const uint32_t current_slot = wheel::slot_for(elapsed_ticks_, level);
    int slot = -1;
    if (level == 0 && (occupied_[0] >> current_slot & 1) != 0) {
      // The current tick still holds timers: overdue ones, or later in this tick.
      slot = static_cast<int>(current_slot);
    } else {
      slot = wheel::next_occupied_slot_after(occupied_[level], current_slot);
    }
    if (slot < 0) continue;
    const uint32_t list = static_cast<uint32_t>(level) * kSlotsPerLevel + slot;
    return round_up_to_tick_ms(slot_min_deadline_ms_[list]);
  }
  return std::nullopt;
}

void TimingWheel::reserve(size_t timers) { entries_.reserve(timers); }

size_t TimingWheel::memory_bytes() const {
  size_t bytes = sizeof(*this) + entries_.capacity() * sizeof(Entry);
  for (const std::vector<Place>& places : coarse_) bytes += places.capacity() * sizeof(Place);
  for (const std::vector<Place>& places : kept_arrays_) bytes += places.capacity() * sizeof(Place);
  return bytes;
}

uint64_t TimingWheel::tick_for(int64_t deadline_ms) const {
  if (deadline_ms <= start_ms_) return elapsed_ticks_;  // overdue: fires with the current tick
  // deadline_ms > start_ms_, so the difference is positive and fits in 64 bits even when it
  // overflows int64_t.
  const uint64_t since_start_ms =
      static_cast<uint64_t>(deadline_ms) - static_cast<uint64_t>(start_ms_);
  const uint64_t tick = ticks_in(since_start_ms);
  // A tick already passed (overdue, or earlier in an advance() that is running) joins the
  // current tick, which is the next one to fire.
  return std::max(tick, elapsed_ticks_);
}

int64_t TimingWheel::round_up_to_tick_ms(int64_t deadline_ms) const {
  if (deadline_ms <= start_ms_) return deadline_ms;  // overdue anyway
  const auto tick_ms = static_cast<unsigned __int128>(tick_ms_);
  const unsigned __int128 since_start_ms =
      static_cast<uint64_t>(deadline_ms) - static_cast<uint64_t>(start_ms_);
  const unsigned __int128 rounded_ms = (since_start_ms + tick_ms - 1) / tick_ms * tick_ms;
  const __int128 boundary_ms = static_cast<__int128>(start_ms_) + static_cast<__int128>(rounded_ms);
  return boundary_ms > INT64_MAX ? INT64_MAX : static_cast<int64_t>(boundary_ms);
}

uint32_t TimingWheel::list_for(uint64_t tick) const {
  const int level = wheel::level_for(elapsed_ticks_, tick);
  return static_cast<uint32_t>(level) * kSlotsPerLevel + wheel::slot_for(tick, level);
}

void TimingWheel::insert(uint32_t index) { insert(index, entries_[index].deadline_ms); }

void TimingWheel::insert(uint32_t index, int64_t deadline_ms) {
  link_into_slot(list_for(tick_for(deadline_ms)), index, deadline_ms);
}

void TimingWheel::link_into_slot(uint32_t list, uint32_t index, int64_t deadline_ms) {
  uint64_t& occupied = occupied_[list / kSlotsPerLevel];
  const uint64_t bit = uint64_t{1} << (list % kSlotsPerLevel);
  // A slot that was empty starts a fresh lower bound; see slot_min_deadline_ms_.
  slot_min_deadline_ms_[list] =
      (occupied & bit) == 0 ? deadline_ms : std::min(slot_min_deadline_ms_[list], deadline_ms);
  occupied |= bit;
  if (!is_coarse(list)) return link_back(list, index);
  std::vector<Place>& places = coarse_[list - kFirstCoarseList];
  if (places.capacity() == 0) take_kept_array(list);
  Entry& entry = entries_[index];
  entry.list = list;
  entry.prev = static_cast<uint32_t>(places.size());
  places.push_back(Place{index, static_cast<uint32_t>(deadline_ms)});
}

void TimingWheel::link_back(uint32_t list, uint32_t index) {
  Entry& entry = entries_[index];
  entry.list = list;
  entry.next = kNil;
  entry.prev = tails_[list];
  if (tails_[list] == kNil) {
    heads_[list] = index;
  } else {
    entries_[tails_[list]].next = index;
  }
  tails_[list] = index;
}

void TimingWheel::unlink(uint32_t index) {
  Entry& entry = entries_[index];
  const uint32_t list = entry.list;
  if (entry.prev == kNil) {
    heads_[list] = entry.next;
  } else {
    entries_[entry.prev].next = entry.next;
  }
  if (entry.next == kNil) {
    tails_[list] = entry.prev;
  } else {
    entries_[entry.next].prev = entry.prev;
  }
  if (heads_[list] == kNil && list < kWheelLists) {
    occupied_[list / kSlotsPerLevel] &= ~(uint64_t{1} << (list % kSlotsPerLevel));
  }
}

uint32_t TimingWheel::allocate() {
  if (free_head_ != kNil) {
    const uint32_t index = free_head_;
    free_head_ = entries_[index].next;
    return index;
  }
  return grow_slab();
}

uint32_t TimingWheel::grow_slab() {
  if (entries_.size() == entries_.capacity()) {
    // 1.5x instead of the library's 2x keeps an entry at <= 48 bytes per pending timer.
    entries_.reserve(std::max<size_t>(64, entries_.capacity() + entries_.capacity() / 2));
  }
  if (entries_.size() >= kNil) {
    std::fprintf(stderr, "TimingWheel: more than %u pending timers\n", kNil - 1);
    std::abort();
  }
  entries_.push_back(Entry{0, 0, kNil, kNil, 0, kFreeList});
  return static_cast<uint32_t>(entries_.size() - 1);
}

void TimingWheel::keep_for_later(uint32_t index) { link_back(kKeptList, index); }

void TimingWheel::restore_kept() {
  const uint32_t current_list = wheel::slot_for(elapsed_ticks_, 0);
  while (heads_[kKeptList] != kNil) {
    const uint32_t index = heads_[kKeptList];
    unlink(index);
    link_into_slot(current_list, index, entries_[index].deadline_ms);
  }
}

bool TimingWheel::step_to_coarse_slot() {
  for (int level = 1; level < wheel::kLevels; ++level) {
    const int slot =
        wheel::next_occupied_slot_after(occupied_[level], wheel::slot_for(elapsed_ticks_, level));
    if (slot < 0) continue;
    // The lowest occupied level holds the earliest timers.
    const uint64_t start_tick = wheel::slot_start_tick(elapsed_ticks_, level, slot);
    if (start_tick > target_ticks_) break;
    elapsed_ticks_ = start_tick;
    cascade(static_cast<uint32_t>(level) * kSlotsPerLevel + slot);
    return true;
  }
  elapsed_ticks_ = target_ticks_;
  return false;
}

void TimingWheel::cascade(uint32_t list) {
  // elapsed_ticks_ now stands at the slot's first tick, so every timer of the slot lands in a
  // lower level and none comes back here. The slot is taken whole and emptied first (no
  // callback runs during a cascade, so nothing can cancel from the detached array).
  std::vector<Place> places = std::move(coarse_[list - kFirstCoarseList]);
  stale_places_[list - kFirstCoarseList] = 0;
  occupied_[list / kSlotsPerLevel] &= ~(uint64_t{1} << (list % kSlotsPerLevel));
  // Every deadline of the slot lies in [slot_start_ms, slot_start_ms + span): when the span is
  // at most 2^32 ms, the low 32 bits say which. Wider slots (years ahead) read the entry.
  const int level = static_cast<int>(list / kSlotsPerLevel);
  using Wide = unsigned __int128;
  const bool low_bits_suffice =
      (static_cast<Wide>(tick_ms_) << (level * wheel::kSlotBits)) <= (Wide{1} << 32);
  const int64_t slot_start_ms = static_cast<int64_t>(
      static_cast<uint64_t>(start_ms_) + elapsed_ticks_ * static_cast<uint64_t>(tick_ms_));
  // The entries are written kPrefetchAhead places ahead of the one being moved, so that their
  // cache misses overlap instead of following one another.
  constexpr size_t kPrefetchAhead = 32;
  for (size_t place = 0; place < places.size(); ++place) {
    if (place + kPrefetchAhead < places.size() && places[place + kPrefetchAhead].index != kNil) {
      __builtin_prefetch(&entries_[places[place + kPrefetchAhead].index], 1);
    }
    const Place& moving = places[place];
    if (moving.index == kNil) continue;  // cancelled
    const int64_t deadline_ms =
        low_bits_suffice
            ? slot_start_ms +
                  static_cast<uint32_t>(moving.deadline_low - static_cast<uint32_t>(slot_start_ms))
            : entries_[moving.index].deadline_ms;
    insert(moving.index, deadline_ms);
  }
  std::vector<Place>& kept = kept_arrays_[level];
  if (places.capacity() > kept.capacity()) {
    places.clear();
    kept = std::move(places);
  }
}

void TimingWheel::take_kept_array(uint32_t list) {
  std::vector<Place>& kept = kept_arrays_[list / kSlotsPerLevel];
  if (kept.capacity() != 0) coarse_[list - kFirstCoarseList].swap(kept);
}

}  // namespace delaybridge
