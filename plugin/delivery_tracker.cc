#include "plugin/delivery_tracker.h"

#include <algorithm>

namespace delaybridge::plugin {

std::string ToString(RecordPosition position) {
  return std::to_string(position.deliver_at_ms) + "/" + std::to_string(position.ordinal);
}

RecordPosition DeliveryTracker::Watermark(int64_t horizon_ms, int64_t now_ms) {
  floor_ = Peek(horizon_ms, now_ms);
  return floor_;
}

RecordPosition DeliveryTracker::Peek(int64_t horizon_ms, int64_t now_ms) const {
  // Nothing outstanding: all loaded records are delivered, and a future append lands at
  // max(requested, now, floor), so nothing can appear before min(horizon, now).
  RecordPosition candidate{std::min(horizon_ms, now_ms), 0};
  // Never past now either: a record appended now asking for a time before the oldest
  // outstanding one would be placed after it, at the floor, yet is due (and delivered) at the
  // time it asked for, out of the store's order; a stop then would deliver it again.
  if (auto oldest = outstanding_.smallest()) candidate = std::min(candidate, *oldest);
  return std::max(floor_, candidate);
}

}  // namespace delaybridge::plugin
