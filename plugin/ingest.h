// Ingest decision: what happens to one record consumed from a delay topic. It is either
// accepted (a DelayedRecord to append to the partition's store, with its encoding), a cancel of
// an earlier record of the same partition (x-delay-cancel), or rejected with a reason (and then
// goes to the dead-letter topic). Pure: no Kafka handles, no
// clock reads, so every bad-input case is unit-tested.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "plugin/delay_headers.h"
#include "plugin/delayed_record.h"
#include "plugin/encoded_record.h"
#include "plugin/stored_cancel.h"

namespace delaybridge::plugin {

// A record as consumed from a delay topic, copied out of librdkafka's message.
struct IncomingRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<int64_t> timestamp_ms;  // nullopt: the record has no timestamp
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<KafkaHeader> headers;  // all of them, in order
};

struct IngestPolicy {
  DelayPolicy delay;
  uint32_t max_record_bytes = 0;  // limit on the encoded DelayedRecord
};

// The record to store, encoded straight from the consumed one (its fields are read from the
// encoding: requested_deliver_at_ms(), source_offset(), SourceId(), Decode()).
struct Accepted {
  EncodedRecord encoded;
};

struct Rejected {
  std::string reason;  // becomes the x-delay-error header
};

// A cancel: never delivered itself; its target is dropped if still pending
// (PartitionStore::ApplyCancel).
struct CancelRequested {
  StoredCancel cancel;
};

using IngestDecision = std::variant<Accepted, CancelRequested, Rejected>;

IngestDecision DecideIngest(const IncomingRecord& in, const std::string& default_target,
                            const IngestPolicy& policy, int64_t now_ms);

}  // namespace delaybridge::plugin
