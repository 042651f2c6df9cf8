// FlatInt64Map: a hash map from int64_t keys to values held in one array: open addressing,
// linear probing, erasure by backward shift (no tombstones), at most half full. A key and its
// value share a slot, so a lookup of a key out of the cache costs one miss where
// std::unordered_map costs three (its bucket array, the node before the key's, the key's node):
// OutstandingPositions looks up a millisecond per record, in random order over thousands of
// them. The array shrinks once it is an eighth full, so a peak (a preload after a long outage)
// does not keep its memory.
//
// Pointers to values are invalidated by TryEmplace and Erase.
//
// Thread-safety: a plain value.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace delaybridge::plugin {

template <typename V>
class FlatInt64Map {
 public:
  // key's value, default-constructed and inserted when missing; true when inserted.
  std::pair<V*, bool> TryEmplace(int64_t key) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(std::max(kMinSlots, 2 * slots_.size()));
    size_t i = HomeOf(key);
    for (; slots_[i].used; i = Next(i)) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
    }
    slots_[i].used = true;
    slots_[i].key = key;
    ++size_;
    return {&slots_[i].value, true};
  }

  V* Find(int64_t key) { return const_cast<V*>(std::as_const(*this).Find(key)); }
  const V* Find(int64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = HomeOf(key); slots_[i].used; i = Next(i)) {
      if (slots_[i].key == key) return &slots_[i].value;
    }
    return nullptr;
  }
  bool contains(int64_t key) const { return Find(key) != nullptr; }

  // False when key is missing.
  bool Erase(int64_t key) {
    if (slots_.empty()) return false;
    size_t hole = HomeOf(key);
    for (; slots_[hole].key != key; hole = Next(hole)) {
      if (!slots_[hole].used) return false;
    }
    if (!slots_[hole].used) return false;  // an empty slot's key matched
    // Backward shift: a later slot of the run moves into the hole unless its home lies
    // cyclically in (hole, slot], where it would no longer be found.
    for (size_t i = Next(hole); slots_[i].used; i = Next(i)) {
      if (((i - HomeOf(slots_[i].key)) & Mask()) >= ((i - hole) & Mask())) {
        slots_[hole] = std::move(slots_[i]);
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    if (slots_.size() > kMinSlots && 8 * size_ < slots_.size()) Rehash(slots_.size() / 2);
    return true;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Slots of the array (for tests).
  size_t capacity() const { return slots_.size(); }

  // Calls fn(key, value) for every entry, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& slot : slots_) {
      if (slot.used) fn(slot.key, slot.value);
    }
  }

 private:
  struct Slot {
    int64_t key = 0;
    bool used = false;
    V value{};
  };
  static constexpr size_t kMinSlots = 16;

  size_t Mask() const { return slots_.size() - 1; }
  size_t Next(size_t i) const { return (i + 1) & Mask(); }
  // Fibonacci hashing: the top bits of key times 2^64 / golden ratio, so consecutive
  // milliseconds land far apart and any key spreads over the whole array.
  size_t HomeOf(int64_t key) const {
    const uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> (64 - std::countr_zero(slots_.size())));
  }

  // slots: a power of two.
  void Rehash(size_t slots) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slots));
    for (Slot& slot : old) {
      if (!slot.used) continue;
      size_t i = HomeOf(slot.key);
      while (slots_[i].used) i = Next(i);
      slots_[i] = std::move(slot);
    }
  }

  std::vector<Slot> slots_;  // empty, or a power of two of at least kMinSlots
  size_t size_ = 0;
};

}  // namespace delaybridge::plugin
