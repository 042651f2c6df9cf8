// DelayedRecord: what the bridge stores in the DelayLog for one accepted record, and its
// versioned binary encoding (the "Bridge payload" section of docs/storage-format.md). Pure
// code without librdkafka, so that tools (delaylog-dump) can link it from the small
// delaybridge_record library.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace delaybridge::plugin {

// The encoding version written by EncodeDelayedRecord; Decode rejects any other.
inline constexpr uint8_t kDelayedRecordVersion = 1;

// One header of a Kafka record (not the DelayLog's on-disk record header, storage::RecordHeader).
struct KafkaHeader {
  std::string name;
  std::optional<std::string> value;  // nullopt: null header value (Kafka allows it)
  bool operator==(const KafkaHeader&) const = default;
};

struct DelayedRecord {
  std::string target_topic;
  std::optional<std::string> key;    // nullopt: null key
  std::optional<std::string> value;  // nullopt: null value (a tombstone)
  std::vector<KafkaHeader> headers;  // the original headers minus x-delay/x-deliver-at/
                                     // x-target-topic
  std::string source_topic;
  int32_t source_partition = 0;
  int64_t source_offset = 0;
  int64_t source_timestamp_ms = -1;     // -1: the source record had no timestamp
  int64_t requested_deliver_at_ms = 0;  // as the headers asked (the store keys on the
                                        // effective time, never earlier)
  bool operator==(const DelayedRecord&) const = default;

  // "topic/partition/offset": the x-delay-source value, stable across re-deliveries.
  std::string SourceId() const;
  // The time a delivery counts as late from: the time asked for, but never before the record
  // was produced (x-deliver-at: 0 asks for "now", not for 1970).
  int64_t due_ms() const { return std::max(requested_deliver_at_ms, source_timestamp_ms); }
};

// A valid encoding read in place: every field a view into the bytes it was read from, which
// must outlive it. Reading it allocates nothing, so a record can wait in memory as its encoding
// and be produced from it. Made by ViewDelayedRecord only: ForEachHeader and ToDelayedRecord trust
// its header fields.
struct DelayedRecordView {
  std::string_view target_topic;
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::string_view source_topic;
  int32_t source_partition = 0;
  int64_t source_offset = 0;
  int64_t source_timestamp_ms = -1;
  int64_t requested_deliver_at_ms = 0;
  uint32_t header_count = 0;
  std::string_view header_bytes;  // the encoded headers, checked by ViewDelayedRecord

  // As DelayedRecord::SourceId.
  std::string SourceId() const;
  // Calls fn(name, value) for every header in order; value is nullopt for a null value.
  template <typename Fn>
  void ForEachHeader(Fn&& fn) const;
};

std::string EncodeDelayedRecord(const DelayedRecord& record);
// The same from borrowed fields, so a consumed record is encoded without being copied into a
// DelayedRecord first; header_bytes holds header_count headers laid out by AppendEncodedHeader.
std::string EncodeDelayedRecord(const DelayedRecordView& view);
// Appends one header as the encoding lays it out (for DelayedRecordView::header_bytes).
void AppendEncodedHeader(std::string* header_bytes, std::string_view name,
                         std::optional<std::string_view> value);

// Corruption with the failing field and byte offset when bytes are not a valid encoding.
Result<DelayedRecordView> ViewDelayedRecord(std::string_view bytes);
// The view's fields copied out.
DelayedRecord ToDelayedRecord(const DelayedRecordView& view);
// ViewDelayedRecord, then ToDelayedRecord.
Result<DelayedRecord> DecodeDelayedRecord(std::string_view bytes);

// The source_offset field alone, read where the encoding puts it (no copy of key, value or
// headers); nullopt when bytes are too short or of another version. For searches that compare
// many records by offset; DecodeDelayedRecord checks the whole encoding.
std::optional<int64_t> PeekSourceOffset(std::string_view bytes);

namespace delayed_record_internal {
// Reads one encoded header at *pos of bytes checked by ViewDelayedRecord.
void NextHeader(std::string_view bytes, size_t* pos, std::string_view* name,
                std::optional<std::string_view>* value);
}  // namespace delayed_record_internal

template <typename Fn>
void DelayedRecordView::ForEachHeader(Fn&& fn) const {
  size_t pos = 0;
  for (uint32_t i = 0; i < header_count; ++i) {
    std::string_view name;
    std::optional<std::string_view> header_value;
    delayed_record_internal::NextHeader(header_bytes, &pos, &name, &header_value);
    fn(name, header_value);
  }
}

}  // namespace delaybridge::plugin
