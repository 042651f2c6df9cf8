// ClockStepWatch: notices the wall clock stepping back between two looks (the preloader looks
// every 100 ms). A step of kClockStepMs or more is counted and logged with what it means for
// delivery; one of kClockStepStopMs or more is an error the bridge stops on, because librdkafka's
// threads wait for deadlines on the wall clock (librdkafka issue #2145), so its producer and
// consumer can stall for as long as the step.
//
// Thread-safety: one owner thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "plugin/log.h"

namespace delaybridge::plugin {

inline constexpr int64_t kClockStepMs = 1'000;       // a step back this large is reported
inline constexpr int64_t kClockStepStopMs = 30'000;  // a step back this large stops the bridge

// What a delivered checkpoint ahead of the clock means for the records arriving now.
std::string CheckpointAheadConsequence(bool exactly_once);

class ClockStepWatch {
 public:
  ClockStepWatch(Logger& logger, bool exactly_once)
      : logger_(logger), exactly_once_(exactly_once) {}

  // Compares now_ms with the previous look. Unavailable: the clock stepped back by
  // kClockStepStopMs or more.
  Status Notice(int64_t now_ms);
  uint64_t steps_back() const { return steps_back_; }

 private:
  Logger& logger_;
  const bool exactly_once_;
  int64_t last_ms_ = 0;
  uint64_t steps_back_ = 0;
};

}  // namespace delaybridge::plugin
