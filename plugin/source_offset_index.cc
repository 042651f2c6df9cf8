#include "plugin/source_offset_index.h"

#include <algorithm>
#include <bit>

namespace delaybridge::plugin {

size_t SourceOffsetIndex::Home(int64_t offset) const {
  // Fibonacci hashing: offsets are consecutive integers, which the high bits of the product
  // spread over the table.
  const uint64_t mixed = static_cast<uint64_t>(offset) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(mixed >> (64 - std::countr_zero(slots_.size())));
}

void SourceOffsetIndex::Add(int64_t offset, uint64_t token) {
  if ((size_ + 1) * 4 > slots_.size() * 3) {
    Rehash(std::max(kMinCapacity, slots_.size() * 2));
  }
  size_t i = Home(offset);
  while (slots_[i].used) i = Next(i);
  slots_[i] = Slot{offset, token, true};
  ++size_;
}

bool SourceOffsetIndex::Remove(int64_t offset, uint64_t token) {
  if (slots_.empty()) return false;
  for (size_t i = Home(offset); slots_[i].used; i = Next(i)) {
    if (slots_[i].offset != offset || slots_[i].token != token) continue;
    EraseAt(i);
    --size_;
    // Give the memory of a burst back once it has drained.
    if (slots_.size() > kMinCapacity && size_ * 8 < slots_.size()) Rehash(slots_.size() / 2);
    return true;
  }
  return false;
}

std::vector<uint64_t> SourceOffsetIndex::Find(int64_t offset) const {
  std::vector<uint64_t> tokens;
  if (slots_.empty()) return tokens;
  for (size_t i = Home(offset); slots_[i].used; i = Next(i)) {
    if (slots_[i].offset == offset) tokens.push_back(slots_[i].token);
  }
  return tokens;
}

void SourceOffsetIndex::Rehash(size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  for (const Slot& slot : old) {
    if (!slot.used) continue;
    size_t i = Home(slot.offset);
    while (slots_[i].used) i = Next(i);
    slots_[i] = slot;
  }
}

void SourceOffsetIndex::EraseAt(size_t i) {
  slots_[i].used = false;
  // Backward-shift deletion: an entry after the gap moves into it unless its home lies
  // cyclically after the gap and at or before the entry's slot (it would then be found
  // before the gap anyway).
  for (size_t j = Next(i); slots_[j].used; j = Next(j)) {
    const size_t home = Home(slots_[j].offset);
    const bool home_in_gap_to_j = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (home_in_gap_to_j) continue;
    slots_[i] = slots_[j];
    slots_[j].used = false;
    i = j;
  }
}

}  // namespace delaybridge::plugin
