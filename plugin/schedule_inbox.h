// ScheduleInbox: the records the owner hands the delivery thread (Deliverer::Schedule), waiting
// for the thread to take them, and the rule for when handing them over must wake the thread.
//
// A delayed record is usually handed over seconds before it falls due, and the delivery thread
// wakes often anyway: its due timer fires for every tick with a record in it (under load, every
// millisecond or two). Waking it for each batch the owner hands over was a third of its wake-ups
// at 25,000 records a second, each some 20 us of CPU (docs/BENCHMARKS.md). So the thread
// promises the time by which it looks into the inbox next (its due timer's wake-up), and a batch
// wakes it only when one of its records is due before that promise plus kPromiseMarginMs (the
// margin covers a wake-up that comes late), or when there is no promise (the timer is not
// armed: nothing waits, or exactly_once paused it).
//
// The delivery thread takes what waits, then promises (Promise), and takes again when Promise
// reports batches put in between, under the promise it replaced: a batch is never left behind a
// promise made without it.
//
// Thread-safety: Put from the owner's thread, Take and Promise from the delivery thread; one
// mutex guards everything.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "plugin/record_handover.h"

namespace delaybridge::plugin {

class ScheduleInbox {
 public:
  static constexpr int64_t kPromiseMarginMs = 20;

  // Owner: adds a batch whose earliest record is due at earliest_due_ms. True: the delivery
  // thread must be woken to take it (the caller posts the wake-up; until the thread takes the
  // inbox, later batches do not ask again).
  [[nodiscard]] bool Put(std::vector<DueRecord> batch, int64_t earliest_due_ms);
  // Delivery thread: every batch put since the last Take, in the order put.
  std::vector<std::vector<DueRecord>> Take();
  // Delivery thread: it takes the inbox again at or before looks_by_ms (nullopt: it promises
  // nothing, every Put wakes it). True: batches wait that were put before this promise was
  // made; Take them (and promise again).
  [[nodiscard]] bool Promise(std::optional<int64_t> looks_by_ms);

 private:
  std::mutex mu_;
  std::vector<std::vector<DueRecord>> batches_;
  std::optional<int64_t> looks_by_ms_;
  bool wake_up_asked_ = false;  // a Put returned true and the thread has not taken since
};

}  // namespace delaybridge::plugin
