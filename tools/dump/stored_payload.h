// How delaylog-dump reads a stored payload: by its first byte, a DelayedRecord
// (plugin/delayed_record.h) or a StoredCancel (plugin/stored_cancel.h), and which records the
// cancels of a second name. A cancel drops every record of its own second whose source offset is
// its target offset (plugin/preloader.cc LoadSecond); CancelTargets answers with that same rule,
// so the dump calls cancelled exactly the records the preloader drops.
//
// Thread-safety: DecodeStoredPayload is pure; a CancelTargets is used by one thread (even its
// const methods sort).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"
#include "plugin/delayed_record.h"
#include "plugin/stored_cancel.h"

namespace delaybridge::dump {

using StoredPayload = std::variant<plugin::DelayedRecord, plugin::StoredCancel>;

// read_status is how reading the payload went: when it is not ok, it is returned as is.
// Corruption when the payload does not decode as the kind its first byte says, or says none.
Result<StoredPayload> DecodeStoredPayload(const Status& read_status, std::string_view payload);

// "record", "cancel" or "unknown" (unreadable, or a first byte of neither kind).
std::string_view KindName(const Status& read_status, std::string_view payload);

// The cancels of one second or one hour. Memory: 16 bytes per cancel added.
class CancelTargets {
 public:
  // Notes that the cancel stored in epoch_second names its target there.
  void Add(int64_t epoch_second, const plugin::StoredCancel& cancel);
  // Adds payload when it is a cancel that decodes; other payloads are left to the caller.
  void AddIfCancel(int64_t epoch_second, std::string_view payload);

  // True when a cancel of epoch_second names source_offset. Only the record's own second counts:
  // a cancel is stored in the second of every copy of its target.
  bool Cancels(int64_t epoch_second, int64_t source_offset) const;
  // True when epoch_second holds a cancel.
  bool HasSecond(int64_t epoch_second) const;
  bool empty() const { return targets_.empty(); }

 private:
  // Sorted on the first query after an Add: adding stays cheap, and a pass adds all before it
  // asks.
  const std::vector<std::pair<int64_t, int64_t>>& Sorted() const;

  mutable std::vector<std::pair<int64_t, int64_t>> targets_;  // (epoch second, target offset)
  mutable bool sorted_ = true;
};

}  // namespace delaybridge::dump
