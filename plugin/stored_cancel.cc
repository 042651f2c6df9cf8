#include "plugin/stored_cancel.h"

#include "plugin/delayed_record.h"
#include "storage/coding.h"

namespace delaybridge::plugin {

namespace {

// version, target_offset, cancel_offset, cancel_timestamp_ms, source_partition, topic length.
constexpr size_t kFixedBytes = 1 + 8 + 8 + 8 + 4 + 4;

Status Malformed(const std::string& what) { return Status::Corruption("stored cancel: " + what); }

std::string Id(const std::string& topic, int32_t partition, int64_t offset) {
  return topic + "/" + std::to_string(partition) + "/" + std::to_string(offset);
}

}  // namespace

std::string StoredCancel::SourceId() const {
  return Id(source_topic, source_partition, cancel_offset);
}

std::string StoredCancel::TargetId() const {
  return Id(source_topic, source_partition, target_offset);
}

StoredPayloadKind KindOfStoredPayload(std::string_view payload) {
  if (payload.empty()) return StoredPayloadKind::kUnknown;
  switch (static_cast<uint8_t>(payload[0])) {
    case kDelayedRecordVersion:
      return StoredPayloadKind::kDelayedRecord;
    case kStoredCancelVersion:
      return StoredPayloadKind::kCancel;
    default:
      return StoredPayloadKind::kUnknown;
  }
}

std::optional<int64_t> ArrivalOffsetOf(std::string_view payload) {
  switch (KindOfStoredPayload(payload)) {
    case StoredPayloadKind::kDelayedRecord:
      return PeekSourceOffset(payload);
    case StoredPayloadKind::kCancel:
      // After the version and target_offset.
      if (payload.size() < kFixedBytes) return std::nullopt;
      return static_cast<int64_t>(storage::DecodeFixed64(payload.data() + 1 + 8));
    case StoredPayloadKind::kUnknown:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string EncodeStoredCancel(const StoredCancel& cancel) {
  std::string out;
  out.reserve(kFixedBytes + cancel.source_topic.size());
  out.push_back(static_cast<char>(kStoredCancelVersion));
  storage::PutFixed64(&out, static_cast<uint64_t>(cancel.target_offset));
  storage::PutFixed64(&out, static_cast<uint64_t>(cancel.cancel_offset));
  storage::PutFixed64(&out, static_cast<uint64_t>(cancel.cancel_timestamp_ms));
  storage::PutFixed32(&out, static_cast<uint32_t>(cancel.source_partition));
  storage::PutFixed32(&out, static_cast<uint32_t>(cancel.source_topic.size()));
  out.append(cancel.source_topic);
  return out;
}

Result<StoredCancel> DecodeStoredCancel(std::string_view bytes) {
  if (bytes.size() < kFixedBytes) {
    return Malformed(std::to_string(bytes.size()) + " bytes, shorter than its " +
                     std::to_string(kFixedBytes) + "-byte fixed part");
  }
  if (static_cast<uint8_t>(bytes[0]) != kStoredCancelVersion) {
    return Malformed("unknown version " + std::to_string(static_cast<uint8_t>(bytes[0])));
  }
  const char* p = bytes.data() + 1;
  StoredCancel cancel;
  cancel.target_offset = static_cast<int64_t>(storage::DecodeFixed64(p));
  cancel.cancel_offset = static_cast<int64_t>(storage::DecodeFixed64(p + 8));
  cancel.cancel_timestamp_ms = static_cast<int64_t>(storage::DecodeFixed64(p + 16));
  cancel.source_partition = static_cast<int32_t>(storage::DecodeFixed32(p + 24));
  const uint32_t topic_bytes = storage::DecodeFixed32(p + 28);
  if (topic_bytes != bytes.size() - kFixedBytes) {
    return Malformed("topic length " + std::to_string(topic_bytes) + " at byte 29 does not match " +
                     "the " + std::to_string(bytes.size() - kFixedBytes) + " bytes that follow");
  }
  cancel.source_topic.assign(bytes.substr(kFixedBytes));
  if (cancel.target_offset < 0 || cancel.target_offset >= cancel.cancel_offset) {
    return Malformed("target offset " + std::to_string(cancel.target_offset) +
                     " is not below the cancel's own offset " +
                     std::to_string(cancel.cancel_offset));
  }
  return cancel;
}

}  // namespace delaybridge::plugin
