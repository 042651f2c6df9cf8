#include "plugin/partition_progress.h"

#include <algorithm>

namespace delaybridge::plugin {

namespace {

constexpr int64_t kMsPerMinute = 60'000;
constexpr int64_t kMsPerSecond = 1'000;

}  // namespace

void PartitionProgress::Buckets::Add(int64_t key, int64_t offset) {
  // Offsets arrive in increasing order, so a bucket's lowest offset is its first one, and the
  // buckets' first offsets are in creation order: the oldest live bucket holds the minimum.
  if (live_.insert(key).second) by_first_offset_.push_back({offset, key});
}

void PartitionProgress::Buckets::AddRecovered(int64_t key, int64_t offset) {
  recovered_.push_back({offset, key});
}

int64_t PartitionProgress::Buckets::PruneAndMin(int64_t first_key, int64_t ceiling) {
  // Buckets wholly before first_key hold only delivered records; the oldest live one is the
  // answer, so only the front needs pruning (older dead ones behind it surface later).
  while (!by_first_offset_.empty() && by_first_offset_.front().key < first_key) {
    live_.erase(by_first_offset_.front().key);
    by_first_offset_.pop_front();
  }
  std::erase_if(recovered_, [first_key](const Entry& e) { return e.key < first_key; });
  int64_t lowest = ceiling;
  if (!by_first_offset_.empty()) lowest = std::min(lowest, by_first_offset_.front().offset);
  for (const Entry& e : recovered_) lowest = std::min(lowest, e.offset);
  return lowest;
}

void PartitionProgress::StartAt(int64_t offset) {
  ingest_position_ = std::max(ingest_position_, offset);
}

void PartitionProgress::Consumed(int64_t offset) {
  ingest_position_ = std::max(ingest_position_, offset + 1);
}

void PartitionProgress::AddStored(int64_t offset, int64_t deliver_at_ms, bool late) {
  Consumed(offset);
  pending_by_minute_.Add(deliver_at_ms / kMsPerMinute, offset);
  if (late) late_by_second_.Add(deliver_at_ms / kMsPerSecond, offset);
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
  pending_by_minute_.AddRecovered((until_ms - 1) / kMsPerMinute, min_offset);
  late_by_second_.AddRecovered((late_until_ms - 1) / kMsPerSecond, min_late_offset);
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
  s.low_watermark = pending_by_minute_.PruneAndMin(first_minute, dead_letter_floor);
  s.late_below = late_by_second_.PruneAndMin(first_second, dead_letter_floor);
  return s;
}

}  // namespace delaybridge::plugin
