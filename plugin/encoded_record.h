// EncodedRecord: a DelayedRecord held as its encoding (docs/storage-format.md, "Bridge payload"),
// checked once when made. A record waiting in the delivery thread's memory is one allocation
// instead of a string for each of its key, value, topics and headers, and is produced straight
// from its bytes (view()); it is decoded only to become a dead letter.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "plugin/delayed_record.h"

namespace delaybridge::plugin {

class EncodedRecord {
 public:
  // Bytes as the store holds them: Corruption when they are not a valid encoding.
  static Result<EncodedRecord> FromBytes(std::string bytes);
  static EncodedRecord Encode(const DelayedRecord& record);
  static EncodedRecord Encode(const DelayedRecordView& view);

  // The fields at fixed places of the encoding, read without decoding the rest.
  int64_t requested_deliver_at_ms() const;
  int64_t source_timestamp_ms() const;
  int64_t source_offset() const;
  // As DelayedRecord::due_ms.
  int64_t due_ms() const;

  // Valid while this record lives and is not changed.
  DelayedRecordView view() const;
  DelayedRecord Decode() const { return ToDelayedRecord(view()); }
  // "topic/partition/offset", as DelayedRecord::SourceId.
  std::string SourceId() const;
  std::string target_topic() const { return std::string(view().target_topic); }
  const std::string& bytes() const { return bytes_; }
  // Asks the CPU to fetch the start of the encoding (its fixed fields, the topics) into the
  // cache without waiting for it.
  void Prefetch() const {
    __builtin_prefetch(bytes_.data());
    __builtin_prefetch(bytes_.data() + 64);
  }

 private:
  explicit EncodedRecord(std::string bytes) : bytes_(std::move(bytes)) {}
  int64_t FixedAt(size_t at) const;

  std::string bytes_;  // a valid encoding
};

}  // namespace delaybridge::plugin
