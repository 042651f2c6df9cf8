// PendingDeliveries: every record the delivery thread holds and has not yet seen acknowledged
// (deliveries loaded from the stores and records produced straight from ingest: dead letters and
// exactly_once's delivered-behind records), in a slab addressed by 64-bit tokens (slot index +
// generation). The token is the timing wheel's payload and the producer's message opaque, so a
// late delivery report for a record whose partition was revoked (slot freed, maybe reused) is
// recognised as stale instead of touching the wrong record.
//
// Thread-safety: none; the Deliverer's thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "core/timing_wheel.h"
#include "plugin/delivery_form.h"
#include "plugin/delivery_tracker.h"
#include "plugin/encoded_record.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

struct PendingDelivery {
  TopicPartitionId store;  // the partition store the record came from
  // (effective deliver_at_ms, ordinal) of a record loaded from the store: it is acknowledged by
  // position. Empty for one produced straight from ingest: acknowledged by its source offset.
  std::optional<RecordPosition> position;
  EncodedRecord record;  // in its current form
  DeliveryForm form = DeliveryForm::kRecord;
  uint32_t failed_attempts = 0;  // transient failures of the current form
  // Produce it in a batch of its own: the broker refused its batch as too large, which may have
  // been another record's fault (a broker refuses a batch whole).
  bool alone = false;
  TimerHandle timer;  // valid while waiting in the DueTimer
};

class PendingDeliveries {
 public:
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
    return (static_cast<uint64_t>(slots_[index].generation) << 32) | index;
  }

  // A deque: growing it allocates one more block; a vector's doubling held the old and the new
  // array at once, at the peak of a preload.
  std::deque<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

}  // namespace delaybridge::plugin
