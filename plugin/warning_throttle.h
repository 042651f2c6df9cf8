// WarningThrottle: logs a repeated warning at most once per interval, and says how many
// were suppressed in between, so a broker outage or a failing disk cannot flood the log.
//
// Thread-safety: none; one owner thread calls Warn.
#pragma once

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "plugin/log.h"

namespace delaybridge::plugin {

class WarningThrottle {
 public:
  WarningThrottle(Logger& logger, const Clock& clock, int64_t interval_ms = 1000)
      : logger_(logger), clock_(clock), interval_ms_(interval_ms) {}

  void Warn(const std::string& message);

 private:
  Logger& logger_;
  const Clock& clock_;
  const int64_t interval_ms_;
  int64_t last_warning_ms_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace delaybridge::plugin
