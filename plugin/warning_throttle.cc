#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

void WarningThrottle::Warn(const std::string& message) {
  const int64_t now_ms = clock_.now_ms();
  if (now_ms - last_warning_ms_ < interval_ms_) {
    ++suppressed_;
    return;
  }
  std::string line = message;
  if (suppressed_ > 0) {
    line += " (" + std::to_string(suppressed_) + " similar warnings suppressed)";
  }
  logger_.Warn(line);
  last_warning_ms_ = now_ms;
  suppressed_ = 0;
}

}  // namespace delaybridge::plugin
