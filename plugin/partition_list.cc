#include "plugin/partition_list.h"

#include <cstdlib>
#include <cstring>

namespace delaybridge::plugin {

PartitionList::PartitionList(const std::map<TopicPartitionId, CommittedOffset>& offsets)
    : PartitionList(offsets.size()) {
  for (const auto& [id, committed] : offsets) {
    rd_kafka_topic_partition_t* tp = Add(id);
    tp->offset = committed.offset;
    if (!committed.metadata.empty()) {
      // Freed by rd_kafka_topic_partition_list_destroy.
      tp->metadata = std::malloc(committed.metadata.size());
      std::memcpy(tp->metadata, committed.metadata.data(), committed.metadata.size());
      tp->metadata_size = committed.metadata.size();
    }
  }
}

}  // namespace delaybridge::plugin
