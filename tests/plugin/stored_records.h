// What the plugin unit tests store: a DelayedRecord read from partition `id` at `offset`, due at
// deliver_at_ms, with a key and value naming its offset.
#pragma once

#include <cstdint>
#include <string>

#include "plugin/delayed_record.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

inline DelayedRecord StoredRecordAt(const TopicPartitionId& id, int64_t offset,
                                    int64_t deliver_at_ms) {
  DelayedRecord r;
  r.target_topic = "delivered";
  r.key = "k" + std::to_string(offset);
  r.value = "v" + std::to_string(offset);
  r.source_topic = id.topic;
  r.source_partition = id.partition;
  r.source_offset = offset;
  r.requested_deliver_at_ms = deliver_at_ms;
  return r;
}

}  // namespace delaybridge::plugin
