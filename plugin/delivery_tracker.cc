#include "plugin/delivery_tracker.h"

#include <algorithm>

namespace delaybridge::plugin {

RecordPosition DeliveryTracker::Watermark(int64_t horizon_ms, int64_t now_ms) {
  RecordPosition candidate;
  if (!outstanding_.empty()) {
    candidate = *outstanding_.begin();
  } else {
    // Nothing outstanding: all loaded records are delivered, and a future append lands at
    // max(requested, now, floor), so nothing can appear before min(horizon, now).
    candidate = RecordPosition{std::min(horizon_ms, now_ms), 0};
  }
  floor_ = std::max(floor_, candidate);
  return floor_;
}

}  // namespace delaybridge::plugin
