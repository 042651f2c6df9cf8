// Pure helpers for TimingWheel's levels: which level and slot a tick belongs to, and where the
// next occupied slot of a level starts. Split out of the wheel so they can be tested alone.
//
// A level holds 64 slots; slot s of level L covers 64^L consecutive ticks. Ticks are unsigned
// 64-bit counts since the wheel's start, so 11 levels (10 of 6 bits, the top one of 4) cover
// every possible tick: no deadline is ever clamped or parked in an overflow list.
//
// Thread-safety: pure functions, safe from any thread.
#pragma once

#include <bit>
#include <cstdint>

namespace delaybridge::wheel {

// 64 slots per level: a level's occupancy fits one uint64_t, so finding the next non-empty slot
// is one count-trailing-zeros, and a slot index is 6 bits of the tick.
inline constexpr int kSlotBits = 6;
inline constexpr uint32_t kSlotsPerLevel = 1u << kSlotBits;
// ceil(64 / 6): enough levels for every uint64_t tick.
inline constexpr int kLevels = (64 + kSlotBits - 1) / kSlotBits;

// The level that holds a timer due at `tick` while the wheel stands at `elapsed` (tick >=
// elapsed): the highest 6-bit digit in which the two differ. A timer due in the current tick
// sits in level 0.
constexpr int level_for(uint64_t elapsed, uint64_t tick) {
  const uint64_t differing_bits = (elapsed ^ tick) | (kSlotsPerLevel - 1);
  const int highest_bit = 63 - std::countl_zero(differing_bits);
  return highest_bit / kSlotBits;
}

// The slot of `tick` within `level`: the tick's 6-bit digit for that level.
constexpr uint32_t slot_for(uint64_t tick, int level) {
  return static_cast<uint32_t>(tick >> (level * kSlotBits)) & (kSlotsPerLevel - 1);
}

// The first tick covered by `slot` of `level` while the wheel stands at `elapsed`: elapsed's
// digits above the level, the slot's digit, zeros below.
constexpr uint64_t slot_start_tick(uint64_t elapsed, int level, uint32_t slot) {
  const int shift = level * kSlotBits;
  const int above_shift = shift + kSlotBits;
  const uint64_t above = above_shift >= 64 ? 0 : (elapsed >> above_shift) << above_shift;
  return above | (static_cast<uint64_t>(slot) << shift);
}

// The lowest occupied slot strictly after `current_slot` in an occupancy mask, or -1. Slots at
// or before the current one are empty by construction (their ticks are in the past).
constexpr int next_occupied_slot_after(uint64_t occupied, uint32_t current_slot) {
  const uint64_t later = current_slot >= 63 ? 0 : occupied & (~uint64_t{0} << (current_slot + 1));
  return later == 0 ? -1 : std::countr_zero(later);
}

}  // namespace delaybridge::wheel
