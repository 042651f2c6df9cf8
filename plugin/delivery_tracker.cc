#include "plugin/delivery_tracker.h"

#include <algorithm>

namespace delaybridge::plugin {

RecordPosition DeliveryTracker::Watermark(int64_t horizon_ms, int64_t now_ms) {
  floor_ = Peek(horizon_ms, now_ms);
  return floor_;
}

RecordPosition DeliveryTracker::Peek(int64_t horizon_ms, int64_t now_ms) const {
  RecordPosition candidate;
  if (!outstanding_.empty()) {
    candidate = *outstanding_.begin();
  } else {
    // Nothing outstanding: all loaded records are delivered, and a future append lands at
    // max(requested, now, floor), so nothing can appear before min(horizon, now).
    candidate = RecordPosition{std::min(horizon_ms, now_ms), 0};
  }
  return std::max(floor_, candidate);
}

}  // namespace delaybridge::plugin
