// AckBatch: what the broker acknowledged for the delivery thread, handed to the bridge's event
// loop (Deliverer::TakeAcks, or with a transaction's PrepareCommit), which applies it to its
// stores' trackers and offsets.
//
// Thread-safety: a plain value, built on the delivery thread and moved to the loop.
#pragma once

#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "plugin/delivery_tracker.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

// What the broker acknowledged since the last TakeAcks().
struct AckBatch {
  struct DeadLetterAck {
    TopicPartitionId store;
    int64_t source_offset = 0;
  };
  // Cancel's answer: the positions of the records dropped (never produced, finished like
  // delivered ones; two copies of a record stored twice after a crash); empty when it was
  // produced already or is not held.
  struct CancelAnswer {
    TopicPartitionId store;
    int64_t target_offset = 0;
    std::vector<RecordPosition> cancelled_at;
    bool counted = false;  // as given to Cancel
  };
  std::vector<std::pair<TopicPartitionId, RecordPosition>> delivered;
  std::vector<DeadLetterAck> dead_lettered;
  std::vector<CancelAnswer> cancels;
  bool empty() const { return delivered.empty() && dead_lettered.empty() && cancels.empty(); }
  // Moves more's entries to the end of this batch's.
  void Append(AckBatch&& more);
};

inline void AckBatch::Append(AckBatch&& more) {
  auto move_to_end = [](auto& to, auto& from) {
    if (to.empty()) return to.swap(from);
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  move_to_end(delivered, more.delivered);
  move_to_end(dead_lettered, more.dead_lettered);
  move_to_end(cancels, more.cancels);
}

}  // namespace delaybridge::plugin
