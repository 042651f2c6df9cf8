#include "plugin/pending_deliveries.h"

namespace delaybridge::plugin {

uint64_t PendingDeliveries::Add(PendingDelivery delivery) {
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[index].delivery.emplace(std::move(delivery));
  ++live_;
  return TokenOf(index);
}

PendingDelivery* PendingDeliveries::Find(uint64_t token) {
  const uint32_t index = static_cast<uint32_t>(token & 0xFFFFFFFFu);
  if (index >= slots_.size() || !slots_[index].delivery || TokenOf(index) != token) {
    return nullptr;
  }
  return &*slots_[index].delivery;
}

void PendingDeliveries::Remove(uint64_t token) {
  if (!Find(token)) return;
  const uint32_t index = static_cast<uint32_t>(token & 0xFFFFFFFFu);
  slots_[index].delivery.reset();
  ++slots_[index].generation;  // outstanding copies of the token go stale
  free_.push_back(index);
  --live_;
}

}  // namespace delaybridge::plugin
