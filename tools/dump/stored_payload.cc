#include "tools/dump/stored_payload.h"

#include <algorithm>
#include <limits>
#include <string>

namespace delaybridge::dump {

using plugin::StoredPayloadKind;

Result<StoredPayload> DecodeStoredPayload(const Status& read_status, std::string_view payload) {
  if (!read_status.ok()) return read_status;
  switch (plugin::KindOfStoredPayload(payload)) {
    case StoredPayloadKind::kDelayedRecord: {
      Result<plugin::DelayedRecord> record = plugin::DecodeDelayedRecord(payload);
      if (!record.ok()) return record.status();
      return StoredPayload(std::move(record).value());
    }
    case StoredPayloadKind::kCancel: {
      Result<plugin::StoredCancel> cancel = plugin::DecodeStoredCancel(payload);
      if (!cancel.ok()) return cancel.status();
      return StoredPayload(std::move(cancel).value());
    }
    case StoredPayloadKind::kUnknown:
      break;
  }
  if (payload.empty()) return Status::Corruption("empty payload");
  return Status::Corruption("payload of unknown kind: first byte " +
                            std::to_string(static_cast<uint8_t>(payload[0])));
}

std::string_view KindName(const Status& read_status, std::string_view payload) {
  if (!read_status.ok()) return "unknown";
  switch (plugin::KindOfStoredPayload(payload)) {
    case StoredPayloadKind::kDelayedRecord:
      return "record";
    case StoredPayloadKind::kCancel:
      return "cancel";
    case StoredPayloadKind::kUnknown:
      break;
  }
  return "unknown";
}

void CancelTargets::Add(int64_t epoch_second, const plugin::StoredCancel& cancel) {
  targets_.emplace_back(epoch_second, cancel.target_offset);
  sorted_ = false;
}

void CancelTargets::AddIfCancel(int64_t epoch_second, std::string_view payload) {
  if (plugin::KindOfStoredPayload(payload) != StoredPayloadKind::kCancel) return;
  // A cancel that does not decode names nothing: the preloader reports it and delivers its target.
  Result<plugin::StoredCancel> cancel = plugin::DecodeStoredCancel(payload);
  if (cancel.ok()) Add(epoch_second, *cancel);
}

bool CancelTargets::Cancels(int64_t epoch_second, int64_t source_offset) const {
  return std::binary_search(Sorted().begin(), Sorted().end(),
                            std::pair{epoch_second, source_offset});
}

bool CancelTargets::HasSecond(int64_t epoch_second) const {
  auto first = std::lower_bound(Sorted().begin(), Sorted().end(),
                                std::pair{epoch_second, std::numeric_limits<int64_t>::min()});
  return first != Sorted().end() && first->first == epoch_second;
}

const std::vector<std::pair<int64_t, int64_t>>& CancelTargets::Sorted() const {
  if (!sorted_) {
    std::sort(targets_.begin(), targets_.end());
    // A target cancelled twice (the cancel read again after a crash) is one entry.
    targets_.erase(std::unique(targets_.begin(), targets_.end()), targets_.end());
    sorted_ = true;
  }
  return targets_;
}

}  // namespace delaybridge::dump
