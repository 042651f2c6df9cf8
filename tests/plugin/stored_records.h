// What the plugin unit tests store: the delay-topic partition their stores hold, the hour they
// start at, and a DelayedRecord read from that partition at `offset`, due at deliver_at_ms, with
// a key and value naming its offset; and a record with every kind of field the encoding has (a
// key with a NUL byte, null and empty header values, a repeated header name).
//
// Thread-safety: constants and a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "plugin/delayed_record.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

// An exact hour boundary, so a test's seconds fall in one DelayLog hour file.
inline constexpr int64_t kHourStartMs = 1'800'000'000'000;
inline const TopicPartitionId kStoredPartition{"delayed", 2};

// prefix followed by the number. Appended rather than built with operator+: GCC 12 inlines that
// into callers' loops and then warns of an overlapping memcpy that cannot happen (-Wrestrict,
// GCC bug 105329).
inline std::string NumberedText(char prefix, int64_t number) {
  std::string text(1, prefix);
  text += std::to_string(number);
  return text;
}

inline DelayedRecord StoredRecordAt(int64_t offset, int64_t deliver_at_ms) {
  DelayedRecord r;
  r.target_topic = "delivered";
  r.key = NumberedText('k', offset);
  r.value = NumberedText('v', offset);
  r.source_topic = kStoredPartition.topic;
  r.source_partition = kStoredPartition.partition;
  r.source_offset = offset;
  r.requested_deliver_at_ms = deliver_at_ms;
  return r;
}

inline DelayedRecord RecordWithEveryFieldKind() {
  DelayedRecord r;
  r.target_topic = "delivered";
  r.key = std::string("key\0with-nul", 12);
  r.value = std::string(1000, 'v');
  r.headers = {{"trace", "abc"}, {"null-header", std::nullopt}, {"empty", ""}, {"trace", "dup"}};
  r.source_topic = "delayed";
  r.source_partition = 7;
  r.source_offset = 123'456'789'012;
  r.source_timestamp_ms = 1'800'000'000'000;
  r.requested_deliver_at_ms = 1'800'000'005'000;
  return r;
}

}  // namespace delaybridge::plugin
