#include "plugin/outstanding_positions.h"

#include <algorithm>
#include <cassert>
#include <iterator>

namespace delaybridge::plugin {

bool OutstandingPositions::Add(RecordPosition position) {
  auto [it, created] = by_ms_.try_emplace(position.deliver_at_ms);
  if (created) order_.push(position.deliver_at_ms);
  if (!Insert(it->second, position.ordinal)) return false;
  ++size_;
  return true;
}

bool OutstandingPositions::Remove(RecordPosition position) {
  auto it = by_ms_.find(position.deliver_at_ms);
  if (it == by_ms_.end() || !Erase(it->second, position.ordinal)) return false;
  --size_;
  if (it->second.live == 0) {
    by_ms_.erase(it);
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
  for (const auto& [deliver_at_ms, ms] : by_ms_) live.push_back(deliver_at_ms);
  order_ = decltype(order_)(std::greater<>(), std::move(live));
}

std::optional<RecordPosition> OutstandingPositions::smallest() const {
  if (by_ms_.empty()) return std::nullopt;
  const int64_t deliver_at_ms = order_.top();
  assert(by_ms_.contains(deliver_at_ms) && "the order's top is a live millisecond");
  const Millisecond& ms = by_ms_.at(deliver_at_ms);
  return RecordPosition{deliver_at_ms, ms.ordinals[ms.first_live]};
}

bool OutstandingPositions::Insert(Millisecond& ms, uint32_t ordinal) {
  if (ms.ordinals.empty() || ms.ordinals.back() < ordinal) {
    ms.ordinals.push_back(ordinal);
    ms.removed.push_back(false);
  } else {
    const auto at = std::lower_bound(ms.ordinals.begin(), ms.ordinals.end(), ordinal);
    const size_t i = static_cast<size_t>(at - ms.ordinals.begin());
    if (at != ms.ordinals.end() && *at == ordinal) {
      if (!ms.removed[i]) return false;
      ms.removed[i] = false;  // added again after its removal
    } else {
      ms.ordinals.insert(at, ordinal);
      ms.removed.insert(ms.removed.begin() + static_cast<std::ptrdiff_t>(i), false);
    }
    ms.first_live = std::min(ms.first_live, i);
  }
  ++ms.live;
  return true;
}

bool OutstandingPositions::Erase(Millisecond& ms, uint32_t ordinal) {
  const auto at = std::lower_bound(ms.ordinals.begin(), ms.ordinals.end(), ordinal);
  if (at == ms.ordinals.end() || *at != ordinal) return false;
  const size_t i = static_cast<size_t>(at - ms.ordinals.begin());
  if (ms.removed[i]) return false;
  ms.removed[i] = true;
  --ms.live;
  while (ms.first_live < ms.ordinals.size() && ms.removed[ms.first_live]) ++ms.first_live;
  if (ms.live > 0 && ms.live * 2 < ms.ordinals.size()) Compact(ms);
  return true;
}

void OutstandingPositions::Compact(Millisecond& ms) {
  size_t kept = 0;
  for (size_t i = ms.first_live; i < ms.ordinals.size(); ++i) {
    if (ms.removed[i]) continue;
    ms.ordinals[kept++] = ms.ordinals[i];
  }
  ms.ordinals.resize(kept);
  ms.removed.assign(kept, false);
  ms.first_live = 0;
}

}  // namespace delaybridge::plugin
