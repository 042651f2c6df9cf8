#include "plugin/source_offsets.h"

#include <algorithm>

namespace delaybridge::plugin {

void SourceOffsets::AddStored(int64_t offset, uint64_t append_sequence) {
  pending_.push_back(Entry{offset, append_sequence, false});
  last_added_ = offset;
}

void SourceOffsets::AddDeadLettered(int64_t offset) {
  pending_.push_back(Entry{offset, 0, false});
  last_added_ = offset;
}

void SourceOffsets::AddSettled(int64_t offset) {
  pending_.push_back(Entry{offset, 0, true});
  last_added_ = offset;
  PopSettled();
}

void SourceOffsets::MarkDurable(uint64_t durable_sequence) {
  // Stored entries come in append order, so the durable ones are a prefix of them.
  for (; durable_scan_ < pending_.size(); ++durable_scan_) {
    Entry& e = pending_[durable_scan_];
    if (e.append_sequence == 0) continue;  // dead-lettered or settled: not the store's to settle
    if (e.append_sequence > durable_sequence) break;
    e.settled = true;
  }
  PopSettled();
}

void SourceOffsets::MarkDeadLetterAcked(int64_t offset) {
  auto it = std::lower_bound(pending_.begin(), pending_.end(), offset,
                             [](const Entry& e, int64_t o) { return e.offset < o; });
  if (it != pending_.end() && it->offset == offset) it->settled = true;
  PopSettled();
}

void SourceOffsets::PopSettled() {
  while (!pending_.empty() && pending_.front().settled) {
    next_after_settled_ = pending_.front().offset + 1;
    pending_.pop_front();
    if (durable_scan_ > 0) --durable_scan_;
  }
}

std::optional<int64_t> SourceOffsets::Committable() const {
  // Committing offset X means "resume at X": the first unsettled record, if any.
  if (!pending_.empty()) return pending_.front().offset;
  return next_after_settled_;
}

std::optional<int64_t> SourceOffsets::TakeCommittable() {
  std::optional<int64_t> offset = Committable();
  if (!offset || (last_taken_ && *offset <= *last_taken_)) return std::nullopt;
  last_taken_ = offset;
  return offset;
}

}  // namespace delaybridge::plugin
