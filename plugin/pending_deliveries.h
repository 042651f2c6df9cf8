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
#include <memory>
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

  // Asks the CPU to fetch the token's slot into the cache, without waiting for it: a record
  // falls due seconds after it was scheduled, long out of the cache, so a batch of due tokens is
  // produced faster when the slots ahead of the one being produced are on their way.
  void PrefetchSlot(uint64_t token) const {
    const uint32_t index = IndexOf(token);
    if (index >= size_) return;
    const char* slot = reinterpret_cast<const char*>(&SlotAt(index));
    for (size_t offset = 0; offset < sizeof(Slot); offset += 64) __builtin_prefetch(slot + offset);
  }

  // Calls fn(token, delivery) for every live entry.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (uint32_t i = 0; i < size_; ++i) {
      if (SlotAt(i).delivery) fn(TokenOf(i), *SlotAt(i).delivery);
    }
  }

 private:
  struct Slot {
    uint32_t generation = 0;
    std::optional<PendingDelivery> delivery;
  };
  // Slots live in chunks that never move: growing the slab allocates one more chunk (a vector's
  // doubling held the old and the new array at once, at the peak of a preload), and reaching a
  // slot costs one cache miss (a deque's index goes through its block map first, a second one).
  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkSlots = 1u << kChunkBits;

  static uint32_t IndexOf(uint64_t token) { return static_cast<uint32_t>(token & 0xFFFFFFFFu); }
  Slot& SlotAt(uint32_t index) { return chunks_[index >> kChunkBits][index & (kChunkSlots - 1)]; }
  const Slot& SlotAt(uint32_t index) const {
    return chunks_[index >> kChunkBits][index & (kChunkSlots - 1)];
  }
  uint64_t TokenOf(uint32_t index) const {
    return (static_cast<uint64_t>(SlotAt(index).generation) << 32) | index;
  }

  std::vector<std::unique_ptr<Slot[]>> chunks_;
  uint32_t size_ = 0;  // slots in use or on the free list: [0, size_)
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

}  // namespace delaybridge::plugin
