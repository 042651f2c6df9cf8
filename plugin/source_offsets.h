// SourceOffsets: which offsets of one delay-topic partition may be committed. A consumed
// record is settled when it is durable in the store (its append sequence <= the store's
// durable sequence) or when its dead-letter copy has been acknowledged by the broker. The
// committable offset is the first unsettled one, so a commit never covers a record that a
// crash could still lose.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace delaybridge::plugin {

class SourceOffsets {
 public:
  // Offsets must be added in increasing order (the order the consumer returns them).
  void AddStored(int64_t offset, uint64_t append_sequence);
  void AddDeadLettered(int64_t offset);
  // A record that needs nothing (already in the store from before a crash).
  void AddSettled(int64_t offset);

  void MarkDurable(uint64_t durable_sequence);
  void MarkDeadLetterAcked(int64_t offset);

  // The offset to commit (first unsettled, or one past the last consumed) when it moved past
  // the last value returned; nullopt otherwise.
  std::optional<int64_t> TakeCommittable();
  // The offset to commit regardless of what was committed before (for revoke and shutdown).
  std::optional<int64_t> Committable() const;

  size_t unsettled() const { return pending_.size(); }
  // The highest offset added so far in this run.
  std::optional<int64_t> last_added() const { return last_added_; }

 private:
  struct Entry {
    int64_t offset;
    uint64_t append_sequence;  // 0: a dead-lettered record
    bool settled;
  };
  void PopSettled();

  std::deque<Entry> pending_;
  // Entries before this index are durable or not stored: MarkDurable goes on from here, so a
  // dead letter that waits long keeps a group commit O(records made durable), not O(pending).
  size_t durable_scan_ = 0;
  std::optional<int64_t> next_after_settled_;  // one past the last settled prefix offset
  std::optional<int64_t> last_taken_;
  std::optional<int64_t> last_added_;
};

}  // namespace delaybridge::plugin
