#include "plugin/preloader.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

namespace delaybridge::plugin {

namespace {

// Loads one second's chain into the tracker and on_record. False: the second could not be read
// for now (result->retry says why) and nothing of it was loaded.
bool LoadSecond(PartitionStore& store, int64_t second,
                const std::function<void(RecordPosition, EncodedRecord&&)>& on_record,
                const std::function<void(const std::string&)>& on_corrupt, PreloadResult* result) {
  std::vector<storage::StoredRecord> records;
  if (Status s = store.log().ReadSecond(second, &records); !s.ok()) {
    const Status read = s.WithContext("read second " + std::to_string(second));
    if (s.code() != Status::Code::kCorruption) {
      result->retry = read;
      return false;
    }
    // Verified damage: the good records of the chain are still in `records`; the bad one is
    // reported and skipped.
    ++result->corrupt;
    on_corrupt(read.ToString());
  }
  // A cancel is appended to its target's second, after it: first what the second's cancels
  // name (plugin/stored_cancel.h), then the records they do not.
  std::unordered_set<int64_t> cancelled_offsets;
  const auto where = [](const storage::StoredRecord& stored) {
    return "at " + std::to_string(stored.deliver_at_ms) + "/" + std::to_string(stored.ordinal);
  };
  for (const auto& stored : records) {
    if (KindOfStoredPayload(stored.payload) != StoredPayloadKind::kCancel) continue;
    auto cancel = DecodeStoredCancel(stored.payload);
    if (cancel.ok()) {
      cancelled_offsets.insert(cancel->target_offset);
    } else {
      ++result->corrupt;
      on_corrupt(cancel.status().WithContext("decode cancel " + where(stored)).ToString());
    }
  }
  for (auto& stored : records) {
    const RecordPosition position{stored.deliver_at_ms, stored.ordinal};
    if (KindOfStoredPayload(stored.payload) == StoredPayloadKind::kCancel) continue;
    if (position < store.start()) continue;  // delivered before the store was opened
    auto record = EncodedRecord::FromBytes(std::move(stored.payload));
    if (!record.ok()) {
      ++result->corrupt;
      on_corrupt(record.status().WithContext("decode record " + where(stored)).ToString());
      continue;
    }
    if (cancelled_offsets.contains(record->source_offset())) {
      ++result->cancelled;
      continue;
    }
    store.tracker().Add(position);
    on_record(position, std::move(record).value());
    ++result->loaded;
  }
  return true;
}

// A head table that fails its checks: the store cannot be walked. Any other error may pass (out
// of descriptors, an I/O error) and the walk is tried again.
bool IsDamage(const Status& s) { return s.code() == Status::Code::kCorruption; }

Status FailedWalk(const PartitionStore& store, const Status& s) {
  return s.WithContext("preload " + store.id().ToString());
}

// Whether the walk loads `second` after `loaded` records (PreloadReach says when).
Result<bool> LoadsSecond(storage::DelayLogStore& log, int64_t second, const PreloadReach& reach,
                         size_t loaded) {
  if (second < reach.due_second) return loaded < reach.due_budget;
  const size_t budget = second < reach.near_second ? reach.near_budget : reach.ahead_budget;
  if (loaded >= budget) return false;  // whatever the second holds: no need to count it
  Result<uint32_t> count = log.CountInSecond(second);
  if (!count.ok()) return count.status();
  return loaded + *count <= budget;
}

}  // namespace

PreloadReach BridgePreloadReach(const PartitionStore& store, int64_t now_ms,
                                int64_t lookahead_seconds, size_t in_memory, size_t max_in_memory) {
  const auto room_below = [in_memory](size_t ceiling) {
    return in_memory < ceiling ? ceiling - in_memory : size_t{0};
  };
  return PreloadReach{
      .due_second = store.PreloadHorizonSecond(now_ms + kPreloadLeadMs, 0),
      .due_budget = room_below(max_in_memory),
      .near_second = store.PreloadHorizonSecond(now_ms, std::min<int64_t>(1, lookahead_seconds)),
      .near_budget = room_below(max_in_memory * 3 / 4),
      .horizon_second = store.PreloadHorizonSecond(now_ms, lookahead_seconds),
      .ahead_budget = room_below(max_in_memory / 2),
  };
}

Result<PreloadResult> PreloadStore(
    PartitionStore& store, const PreloadReach& reach,
    const std::function<void(RecordPosition, EncodedRecord&&)>& on_record,
    const std::function<void(const std::string&)>& on_corrupt) {
  PreloadResult result;
  const int64_t horizon_second =
      std::max({reach.due_second, reach.near_second, reach.horizon_second});
  while (store.preloaded_until_second() < horizon_second) {
    auto next = store.log().NextNonEmptySecond(store.preloaded_until_second(), horizon_second);
    if (!next.ok()) {
      if (IsDamage(next.status())) return FailedWalk(store, next.status());
      result.retry = next.status().WithContext("find the next second");
      break;
    }
    if (!next->has_value()) {
      store.set_preloaded_until_second(horizon_second);  // nothing more before the horizon
      break;
    }
    const int64_t second = **next;
    Result<bool> loads = LoadsSecond(store.log(), second, reach, result.loaded);
    if (!loads.ok()) {
      if (IsDamage(loads.status())) return FailedWalk(store, loads.status());
      result.retry = loads.status().WithContext("count second " + std::to_string(second));
      break;
    }
    if (!*loads) {
      store.set_preloaded_until_second(second);  // the seconds before it are empty
      break;
    }
    if (!LoadSecond(store, second, on_record, on_corrupt, &result)) break;
    store.set_preloaded_until_second(second + 1);
  }
  return result;
}

}  // namespace delaybridge::plugin
