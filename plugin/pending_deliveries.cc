#include "plugin/pending_deliveries.h"

namespace delaybridge::plugin {

uint64_t PendingDeliveries::Add(PendingDelivery delivery) {
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    if (size_ % kChunkSlots == 0) chunks_.push_back(std::make_unique<Slot[]>(kChunkSlots));
    index = size_++;
  }
  SlotAt(index).delivery.emplace(std::move(delivery));
  ++live_;
  return TokenOf(index);
}

PendingDelivery* PendingDeliveries::Find(uint64_t token) {
  const uint32_t index = IndexOf(token);
  if (index >= size_) return nullptr;
  Slot& slot = SlotAt(index);
  if (!slot.delivery || TokenOf(index) != token) return nullptr;
  return &*slot.delivery;
}

void PendingDeliveries::Remove(uint64_t token) {
  if (!Find(token)) return;
  Slot& slot = SlotAt(IndexOf(token));
  slot.delivery.reset();
  ++slot.generation;  // outstanding copies of the token go stale
  free_.push_back(IndexOf(token));
  --live_;
}

}  // namespace delaybridge::plugin
