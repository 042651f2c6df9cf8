#include "plugin/outstanding_positions.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace delaybridge::plugin {

bool OutstandingPositions::Add(RecordPosition position) {
  auto [ms, created] = by_ms_.TryEmplace(position.deliver_at_ms);
  if (created) order_.push(position.deliver_at_ms);
  if (!Insert(*ms, position.ordinal)) return false;
  ++size_;
  return true;
}

bool OutstandingPositions::Remove(RecordPosition position) {
  Millisecond* ms = by_ms_.Find(position.deliver_at_ms);
  if (ms == nullptr || !Erase(*ms, position.ordinal)) return false;
  --size_;
  if (ms->live == 0) {
    by_ms_.Erase(position.deliver_at_ms);
    DropEmptiedFromTop(position.deliver_at_ms);
    RebuildOrderIfStale();
  }
  return true;
}

void OutstandingPositions::DropEmptiedFromTop(int64_t emptied_ms) {
  // The top is live unless it was the millisecond just emptied.
  if (order_.top() != emptied_ms) return;
  while (!order_.empty() && !by_ms_.contains(order_.top())) order_.pop();
}

void OutstandingPositions::RebuildOrderIfStale() {
  // Emptied milliseconds below the top stay until they reach it: above a record that stays
  // outstanding for long (a target being retried), they would pile up. Built anew from the live
  // ones once they are half of the heap, which keeps the heap's work per removal O(1) amortised.
  if (order_.size() <= 2 * by_ms_.size() + kMinHeapRebuild) return;
  std::vector<int64_t> live;
  live.reserve(by_ms_.size());
  by_ms_.ForEach(
      [&live](int64_t deliver_at_ms, const Millisecond&) { live.push_back(deliver_at_ms); });
  order_ = decltype(order_)(std::greater<>(), std::move(live));
}

std::optional<RecordPosition> OutstandingPositions::smallest() const {
  if (by_ms_.empty()) return std::nullopt;
  const int64_t deliver_at_ms = order_.top();
  const Millisecond* ms = by_ms_.Find(deliver_at_ms);
  assert(ms != nullptr && "the order's top is a live millisecond");
  return RecordPosition{deliver_at_ms, ms->entries[ms->first_live].ordinal};
}

bool OutstandingPositions::Insert(Millisecond& ms, uint32_t ordinal) {
  if (ms.entries.empty() || ms.entries.back().ordinal < ordinal) {
    ms.entries.push_back(Entry{ordinal, false});
  } else {
    const auto at = LowerBound(ms, ordinal);
    const size_t i = static_cast<size_t>(at - ms.entries.begin());
    if (at != ms.entries.end() && at->ordinal == ordinal) {
      if (!at->removed) return false;
      at->removed = false;  // added again after its removal
    } else {
      ms.entries.insert(at, Entry{ordinal, false});
    }
    ms.first_live = std::min(ms.first_live, i);
  }
  ++ms.live;
  return true;
}

bool OutstandingPositions::Erase(Millisecond& ms, uint32_t ordinal) {
  const auto at = LowerBound(ms, ordinal);
  if (at == ms.entries.end() || at->ordinal != ordinal || at->removed) return false;
  at->removed = true;
  --ms.live;
  while (ms.first_live < ms.entries.size() && ms.entries[ms.first_live].removed) ++ms.first_live;
  if (ms.live > 0 && ms.live * 2 < ms.entries.size()) Compact(ms);
  return true;
}

std::vector<OutstandingPositions::Entry>::iterator OutstandingPositions::LowerBound(
    Millisecond& ms, uint32_t ordinal) {
  return std::lower_bound(ms.entries.begin(), ms.entries.end(), ordinal,
                          [](const Entry& e, uint32_t o) { return e.ordinal < o; });
}

void OutstandingPositions::Compact(Millisecond& ms) {
  size_t kept = 0;
  for (size_t i = ms.first_live; i < ms.entries.size(); ++i) {
    if (!ms.entries[i].removed) ms.entries[kept++] = ms.entries[i];
  }
  ms.entries.resize(kept);
  ms.first_live = 0;
}

}  // namespace delaybridge::plugin
