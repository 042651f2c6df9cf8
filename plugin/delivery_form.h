// DeliveryForm: what is produced for a pending record. A target that refuses a record for good
// (too large, unknown topic, not authorized) moves it one form on; see docs/bridge.md,
// "Failures".
#pragma once

namespace delaybridge::plugin {

enum class DeliveryForm {
  kRecord,             // the record itself, to its target topic
  kDeadLetter,         // the record with x-delay-error, to the dead-letter topic
  kReducedDeadLetter,  // the dead letter without value and headers (ReduceDeadLetter)
};

}  // namespace delaybridge::plugin
