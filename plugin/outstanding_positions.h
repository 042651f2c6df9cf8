// OutstandingPositions: the set of record positions a DeliveryTracker waits for, and its smallest
// element. Every record loaded from a store is added and, once acknowledged, removed, so both are
// on the per-record path of the ingest thread. One tree node per record (std::set) cost a cache
// miss per level with hundreds of thousands outstanding; here positions are grouped by
// millisecond, in a hash table of the milliseconds (a few thousand for a lookahead of seconds)
// over one sorted array of ordinals each. A tree of the milliseconds still cost a dozen levels
// per record (12% of the ingest thread's samples at 25k records a second); their order is kept
// instead by a min-heap that gets a millisecond when its array is created, and drops it lazily
// once it has emptied and reached the top. Ordinals within a millisecond arrive almost always
// in rising order (a store numbers its records in the order they are appended, and loads them
// in that order), so an add is an append; a removal marks its entry, and the array is compacted
// once half of it is marked, so records acknowledged in any order, even a million due in one
// millisecond, cost O(log n) each.
//
// Thread-safety: none; the owner's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace delaybridge::plugin {

struct RecordPosition {
  int64_t deliver_at_ms = 0;
  uint32_t ordinal = 0;
  auto operator<=>(const RecordPosition&) const = default;
};

class OutstandingPositions {
 public:
  // False when position is already in the set.
  bool Add(RecordPosition position);
  // False when position is not in the set.
  bool Remove(RecordPosition position);
  std::optional<RecordPosition> smallest() const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Entries of the order heap, emptied milliseconds not yet dropped included (for tests: at
  // most twice the live milliseconds plus kMinHeapRebuild).
  size_t order_entries() const { return order_.size(); }

 private:
  // The ordinals of one millisecond, sorted; removed ones stay marked until compaction.
  struct Millisecond {
    std::vector<uint32_t> ordinals;
    std::vector<bool> removed;
    size_t first_live = 0;  // every entry before it is removed
    size_t live = 0;
  };
  static bool Insert(Millisecond& ms, uint32_t ordinal);
  static bool Erase(Millisecond& ms, uint32_t ordinal);
  static void Compact(Millisecond& ms);

  static constexpr size_t kMinHeapRebuild = 64;
  // After emptied_ms was emptied: drops emptied milliseconds from the top of order_, so its top
  // is the smallest live one.
  void DropEmptiedFromTop(int64_t emptied_ms);
  // Builds order_ anew from the live milliseconds once emptied ones are half of it.
  void RebuildOrderIfStale();

  std::unordered_map<int64_t, Millisecond> by_ms_;  // only milliseconds with live entries
  // Every key of by_ms_, and emptied milliseconds not yet dropped (maybe twice, when one was
  // created again); the top is always live.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> order_;
  size_t size_ = 0;
};

}  // namespace delaybridge::plugin
