// Dead letter: the record the bridge writes to dead_letter_topic instead of a record it cannot
// deliver, in three cases:
// - rejected at ingest (MakeDeadLetter): the original key, value and every original header
//   (x-delay ones included, so the producer can see what it sent) plus x-delay-error: <reason>;
// - refused for good by its target topic at delivery (DeadLetterOfDelivery): the stored key,
//   value and headers plus x-delay-error naming the target and the broker's error;
// - a dead letter the dead-letter topic refuses for good, e.g. too large (ReduceDeadLetter): no
//   value and no original headers, only what identifies it: x-delay-error, the key when it is
//   small, and x-delay-original-bytes.
// The producer adds x-delay-source: <topic>/<partition>/<offset> to each. A producer's own
// x-delay-source and x-delay-error headers never reach a dead letter (StripReservedHeaders).
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/delayed_record.h"
#include "plugin/ingest.h"

namespace delaybridge::plugin {

// The reduced dead letter keeps the key up to this size: enough for any id, far from a limit.
inline constexpr size_t kReducedKeyMaxBytes = 1024;

// Returns the record to produce; its target_topic is dead_letter_topic.
DelayedRecord MakeDeadLetter(const IncomingRecord& in, const std::string& reason,
                             const std::string& dead_letter_topic);

// A stored record whose target refused it for good; reason becomes x-delay-error.
DelayedRecord DeadLetterOfDelivery(const DelayedRecord& record, const std::string& reason,
                                   const std::string& dead_letter_topic);

// A dead letter that could not be produced whole; reason (why) is appended to its x-delay-error.
DelayedRecord ReduceDeadLetter(const DelayedRecord& letter, const std::string& reason);

// The bytes of key, value and the headers the producer set: what x-delay-original-bytes reports.
size_t RecordPayloadBytes(const DelayedRecord& record);

// Drops the headers only the bridge may set (x-delay-source, x-delay-error) from a producer's
// headers, so a consumer that trusts them cannot be misled.
std::vector<KafkaHeader> StripReservedHeaders(std::vector<KafkaHeader> headers);

}  // namespace delaybridge::plugin
