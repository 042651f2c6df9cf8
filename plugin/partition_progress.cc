#include "plugin/partition_progress.h"

#include <algorithm>

namespace delaybridge::plugin {

namespace {

constexpr int64_t kMsPerMinute = 60'000;
constexpr int64_t kMsPerSecond = 1'000;

void KeepLowest(std::map<int64_t, int64_t>& buckets, int64_t key, int64_t offset) {
  auto [it, inserted] = buckets.try_emplace(key, offset);
  if (!inserted) it->second = std::min(it->second, offset);
}

// Drops the buckets wholly before first_key and returns the lowest offset of the rest.
int64_t PruneAndMin(std::map<int64_t, int64_t>& buckets, int64_t first_key, int64_t ceiling) {
  buckets.erase(buckets.begin(), buckets.lower_bound(first_key));
  int64_t lowest = ceiling;
  for (const auto& [key, offset] : buckets) lowest = std::min(lowest, offset);
  return lowest;
}

}  // namespace

void PartitionProgress::StartAt(int64_t offset) {
  ingest_position_ = std::max(ingest_position_, offset);
}

void PartitionProgress::Consumed(int64_t offset) {
  ingest_position_ = std::max(ingest_position_, offset + 1);
}

void PartitionProgress::AddStored(int64_t offset, int64_t deliver_at_ms, bool late) {
  Consumed(offset);
  KeepLowest(pending_by_minute_, deliver_at_ms / kMsPerMinute, offset);
  if (late) KeepLowest(late_by_second_, deliver_at_ms / kMsPerSecond, offset);
}

void PartitionProgress::AddDeadLetter(int64_t offset) {
  Consumed(offset);
  dead_letters_.insert(offset);
}

void PartitionProgress::DeadLetterAcked(int64_t offset) { dead_letters_.erase(offset); }

void PartitionProgress::AddFinished(int64_t offset) { Consumed(offset); }

void PartitionProgress::AddRecovered(int64_t until_ms, int64_t min_offset, int64_t late_until_ms,
                                     int64_t min_late_offset) {
  // Keyed by the last millisecond they can occupy, so they stay until the checkpoint is past it.
  KeepLowest(pending_by_minute_, (until_ms - 1) / kMsPerMinute, min_offset);
  KeepLowest(late_by_second_, (late_until_ms - 1) / kMsPerSecond, min_late_offset);
}

PartitionProgress::Snapshot PartitionProgress::Take(RecordPosition checkpoint) {
  // A bucket whose whole minute (second) is before the checkpoint holds only delivered records.
  // Placement times are never negative (the store's range), so division floors.
  const int64_t first_minute = checkpoint.deliver_at_ms / kMsPerMinute;
  const int64_t first_second = checkpoint.deliver_at_ms / kMsPerSecond;
  const int64_t dead_letter_floor =
      dead_letters_.empty() ? ingest_position_ : std::min(*dead_letters_.begin(), ingest_position_);
  Snapshot s;
  s.ingest_position = ingest_position_;
  s.low_watermark = PruneAndMin(pending_by_minute_, first_minute, dead_letter_floor);
  s.late_below = PruneAndMin(late_by_second_, first_second, dead_letter_floor);
  return s;
}

}  // namespace delaybridge::plugin
