#include "plugin/clock_step_watch.h"

namespace delaybridge::plugin {

std::string CheckpointAheadConsequence(bool exactly_once) {
  if (exactly_once) {
    return "records asking for a time before a partition's committed checkpoint (which stays "
           "where the clock had reached) are delivered at once, up to the step early";
  }
  return "records are still delivered at the times they ask for; the delivered checkpoints stay "
         "where the clock had reached until it passes them again (records arriving meanwhile "
         "are stored after them, and the progress committed to Kafka waits too)";
}

Status ClockStepWatch::Notice(int64_t now_ms) {
  const int64_t step_ms = last_ms_ - now_ms;
  last_ms_ = now_ms;
  if (step_ms < kClockStepMs) return Status::Ok();
  ++steps_back_;
  if (step_ms >= kClockStepStopMs) {
    return Status::Unavailable(
        "the wall clock stepped back by " + std::to_string(step_ms) +
        " ms: librdkafka waits for deadlines on the wall clock (librdkafka issue #2145) and "
        "could stall this long, so the bridge stops for its supervisor to restart it; after the "
        "restart " +
        CheckpointAheadConsequence(exactly_once_));
  }
  logger_.Warn("the wall clock stepped back by " + std::to_string(step_ms) +
               " ms: " + CheckpointAheadConsequence(exactly_once_));
  return Status::Ok();
}

}  // namespace delaybridge::plugin
