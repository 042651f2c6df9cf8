// DeliveryTracker: the delivered watermark of one store. It holds the position
// (deliver_at_ms, ordinal) of every record loaded from the store (preloaded, or appended inside
// the preloaded horizon) whose delivery the broker has not yet acknowledged. The checkpoint is
// the smallest such position (everything ordered before it is delivered), but never later than
// the preloaded horizon or the current time: a record appended now is placed no earlier than
// now and is due when it asks, so a checkpoint ahead of the clock would place new records after
// it, out of the order they fall due in.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "plugin/outstanding_positions.h"
#include "storage/delivery_checkpoint.h"

namespace delaybridge::plugin {

// "<deliver_at_ms>/<ordinal>", as log lines show a position.
std::string ToString(RecordPosition position);

class DeliveryTracker {
 public:
  // start: the checkpoint read at open (or the position of the store's first record).
  explicit DeliveryTracker(RecordPosition start) : floor_(start) {}

  void Add(RecordPosition position) {
    // The ordering rule every checkpoint rests on: a record loaded or appended after the
    // watermark moved is ordered after it, or the watermark would already claim it delivered.
    assert(!(position < floor_) && "a record ordered before the delivered watermark");
    outstanding_.Add(position);
  }
  // Called on the broker's acknowledgement. Returns false when position was not outstanding.
  bool Acknowledge(RecordPosition position) { return outstanding_.Remove(position); }

  // The watermark given that every record ordered before (horizon_ms, 0) that is not
  // outstanding has been delivered, and that no record earlier than now_ms can be appended.
  // Never moves backwards.
  RecordPosition Watermark(int64_t horizon_ms, int64_t now_ms);
  // The same without moving it (exactly_once: the watermark moves only when a transaction that
  // commits it succeeds, through Advance).
  RecordPosition Peek(int64_t horizon_ms, int64_t now_ms) const;
  void Advance(RecordPosition committed) { floor_ = std::max(floor_, committed); }

  // The lowest deliver_at_ms a new append may use so it sorts after the watermark.
  int64_t floor_ms() const { return floor_.deliver_at_ms; }
  RecordPosition floor() const { return floor_; }
  size_t outstanding() const { return outstanding_.size(); }
  // The earliest record not yet acknowledged; nullopt when none is outstanding.
  std::optional<RecordPosition> oldest_outstanding() const { return outstanding_.smallest(); }

 private:
  OutstandingPositions outstanding_;
  RecordPosition floor_;  // the last watermark returned
};

}  // namespace delaybridge::plugin
