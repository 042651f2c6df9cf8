// OpenHourCache: the appenders of recently used open hours, direct-mapped by epoch hour, so that
// appends spread over many hours (delays of hours to days, each record landing in another hour
// than the one before) find their hour's appender without a lookup in HourTable's maps. One slot
// per hour modulo kSlots, so consecutive hours never evict each other. HourTable forgets an hour
// here whenever it leaves the open set; a slot never names a closed or parked hour.
// Thread-safety: none; the store's owner thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace delaybridge::storage {

class HourAppender;

class OpenHourCache {
 public:
  // The hour's appender, or null when the hour is not cached.
  HourAppender* Find(int64_t epoch_hour) const {
    const Slot& slot = slots_[SlotOf(epoch_hour)];
    return slot.hour == epoch_hour ? slot.appender : nullptr;
  }
  void Remember(int64_t epoch_hour, HourAppender* appender) {
    slots_[SlotOf(epoch_hour)] = Slot{epoch_hour, appender};
  }
  void Forget(int64_t epoch_hour) {
    Slot& slot = slots_[SlotOf(epoch_hour)];
    if (slot.hour == epoch_hour) slot = Slot{};
  }
  void Clear() { slots_.fill(Slot{}); }

  // Calls visit(epoch_hour, appender) for every cached hour (HourTable's checks).
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    for (const Slot& slot : slots_) {
      if (slot.appender != nullptr) visit(slot.hour, slot.appender);
    }
  }

 private:
  static constexpr size_t kSlots = 64;
  struct Slot {
    int64_t hour = -1;  // no hour: epoch hours are never negative (docs/storage-format.md)
    HourAppender* appender = nullptr;
  };
  static size_t SlotOf(int64_t epoch_hour) { return static_cast<uint64_t>(epoch_hour) % kSlots; }

  std::array<Slot, kSlots> slots_{};
};

}  // namespace delaybridge::storage
