// PendingDeliveries: the in-memory records the bridge has loaded and not yet seen
// acknowledged, in a slab addressed by 64-bit tokens (slot index + generation). The token is
// the timing wheel's payload and the producer's message opaque, so a late delivery report
// for a record whose partition was revoked (slot freed, maybe reused) is recognised as stale
// instead of touching the wrong record.
//
// Thread-safety: none; the Deliverer's thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/timing_wheel.h"
#include "plugin/delayed_record.h"
#include "plugin/delivery_tracker.h"
#include "plugin/source_consumer.h"

namespace delaybridge::plugin {

struct PendingDelivery {
  TopicPartitionId store;   // the partition store the record was loaded from
  RecordPosition position;  // (effective deliver_at_ms, ordinal) in that store
  DelayedRecord record;
  uint32_t failed_attempts = 0;
  TimerHandle timer;  // valid while waiting in the wheel
};

class PendingDeliveries {
 public:
  // Tokens have bit 63 clear; the bridge uses bit 63 for dead-letter tokens.
  uint64_t Add(PendingDelivery delivery);
  // nullptr when the token is stale.
  PendingDelivery* Find(uint64_t token);
  void Remove(uint64_t token);
  size_t size() const { return live_; }

  // Calls fn(token, delivery) for every live entry.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].delivery) fn(TokenOf(i), *slots_[i].delivery);
    }
  }

 private:
  struct Slot {
    uint32_t generation = 0;
    std::optional<PendingDelivery> delivery;
  };
  uint64_t TokenOf(uint32_t index) const {
    return (static_cast<uint64_t>(slots_[index].generation & 0x7FFFFFFFu) << 32) | index;
  }

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

}  // namespace delaybridge::plugin
