// SourceOffsetIndex: the tokens of the records the delivery thread holds for one store, by the
// records' source offsets, so a cancel finds its target. Every record loaded from a store is
// added when handed over and removed when settled, so this sits on the per-record path of the
// delivery thread: it is one flat table (open addressing, linear probing) instead of a node per
// record, which cost an allocation and a cache miss per insert and per erase. An offset can map
// to several tokens (a record stored twice after a crash is loaded twice).
//
// Thread-safety: none; the Deliverer's thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace delaybridge::plugin {

class SourceOffsetIndex {
 public:
  void Add(int64_t offset, uint64_t token);
  // Removes that one entry; false when it is not there.
  bool Remove(int64_t offset, uint64_t token);
  // The tokens added under offset and not removed, in no particular order.
  std::vector<uint64_t> Find(int64_t offset) const;
  // Asks the CPU to fetch the slot where offset's entries begin, without waiting for it.
  void PrefetchHome(int64_t offset) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(offset)]);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Slots of the table (for tests: it grows past 3/4 full and shrinks below 1/8).
  size_t capacity() const { return slots_.size(); }

 private:
  struct Slot {
    int64_t offset = 0;
    uint64_t token = 0;
    bool used = false;
  };
  static constexpr size_t kMinCapacity = 64;

  size_t Home(int64_t offset) const;
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void Rehash(size_t capacity);
  // Empties slot i and moves later entries of its cluster back, so no lookup meets a gap
  // before the entry it looks for (no tombstones).
  void EraseAt(size_t i);

  std::vector<Slot> slots_;  // a power of two in size, or empty
  size_t size_ = 0;
};

}  // namespace delaybridge::plugin
