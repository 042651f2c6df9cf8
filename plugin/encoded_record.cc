#include "plugin/encoded_record.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace delaybridge::plugin {

namespace {

// Where the fixed-width fields start (docs/storage-format.md, "DelayedRecord"): version (u8),
// requested_deliver_at_ms, source_timestamp_ms (i64 each), source_partition (i32),
// source_offset (i64).
constexpr size_t kRequestedAt = 1;
constexpr size_t kSourceTimestampAt = 9;
constexpr size_t kSourceOffsetAt = 21;

}  // namespace

Result<EncodedRecord> EncodedRecord::FromBytes(std::string bytes) {
  if (Result<DelayedRecordView> view = ViewDelayedRecord(bytes); !view.ok()) return view.status();
  return EncodedRecord(std::move(bytes));
}

EncodedRecord EncodedRecord::Encode(const DelayedRecord& record) {
  return EncodedRecord(EncodeDelayedRecord(record));
}

EncodedRecord EncodedRecord::Encode(const DelayedRecordView& view) {
  return EncodedRecord(EncodeDelayedRecord(view));
}

int64_t EncodedRecord::FixedAt(size_t at) const {
  assert(bytes_.size() >= at + 8);  // a valid encoding, not a moved-from one
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes_[at + i]);
  return static_cast<int64_t>(v);
}

int64_t EncodedRecord::requested_deliver_at_ms() const { return FixedAt(kRequestedAt); }
int64_t EncodedRecord::source_timestamp_ms() const { return FixedAt(kSourceTimestampAt); }
int64_t EncodedRecord::source_offset() const { return FixedAt(kSourceOffsetAt); }

int64_t EncodedRecord::due_ms() const {
  return std::max(requested_deliver_at_ms(), source_timestamp_ms());
}

DelayedRecordView EncodedRecord::view() const {
  // Checked when made, so it reads.
  return ViewDelayedRecord(bytes_).value();
}

std::string EncodedRecord::SourceId() const { return view().SourceId(); }

}  // namespace delaybridge::plugin
