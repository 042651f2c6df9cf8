// StoredCancel: what the bridge stores in the DelayLog for a cancel (a delay-topic record with
// x-delay-cancel), and its binary encoding (the "Bridge payload" section of
// docs/storage-format.md). The cancel is appended to the second its target is placed in, so the
// preloader, which reads a second whole, sees both and drops the target: nothing is kept in
// memory per pending cancel, and the cancel is as durable as any appended record.
//
// A payload's first byte says what it is: kDelayedRecordVersion for a DelayedRecord,
// kStoredCancelVersion for a StoredCancel (StoredPayloadKind). Pure code without librdkafka, in
// the delaybridge_record library beside the DelayedRecord codec, so that delaylog-dump decodes
// both.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace delaybridge::plugin {

// The first byte of a StoredCancel payload; Decode rejects any other.
inline constexpr uint8_t kStoredCancelVersion = 2;

struct StoredCancel {
  std::string source_topic;  // the delay topic of both the cancel and its target
  int32_t source_partition = 0;
  int64_t cancel_offset = 0;  // the cancel record's own offset
  int64_t target_offset = 0;  // the offset of the record it cancels (always below cancel_offset)
  int64_t cancel_timestamp_ms = -1;  // the cancel record's Kafka timestamp, -1 if it had none
  bool operator==(const StoredCancel&) const = default;

  // "topic/partition/offset" of the cancel record itself.
  std::string SourceId() const;
  // "topic/partition/offset" of the record it cancels: its x-delay-source.
  std::string TargetId() const;
};

enum class StoredPayloadKind { kDelayedRecord, kCancel, kUnknown };
// From the first byte only; an empty payload is kUnknown.
StoredPayloadKind KindOfStoredPayload(std::string_view payload);

// The offset a payload was read at (a delayed record's source_offset, a cancel's cancel_offset),
// which grows with the order payloads are appended in; nullopt for a payload too short or of
// another kind. Reads the field alone (PeekSourceOffset for a delayed record).
std::optional<int64_t> ArrivalOffsetOf(std::string_view payload);

std::string EncodeStoredCancel(const StoredCancel& cancel);
// Corruption naming the failing field and byte offset when bytes are not a valid encoding.
Result<StoredCancel> DecodeStoredCancel(std::string_view bytes);

}  // namespace delaybridge::plugin
