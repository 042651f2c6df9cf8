// PartitionList: owns a librdkafka C partition list (rd_kafka_topic_partition_list_t). The C
// API is used for offsets with metadata, which librdkafka's C++ API (2.0) cannot carry: the
// consumer's commits and the transactional producer's send_offsets_to_transaction both need it.
//
// Thread-safety: none; a value owned by one thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <map>

#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class PartitionList {
 public:
  explicit PartitionList(size_t size) : list_(rd_kafka_topic_partition_list_new(size)) {}
  // One entry per partition, with its offset and metadata.
  explicit PartitionList(const std::map<TopicPartitionId, CommittedOffset>& offsets);
  ~PartitionList() { rd_kafka_topic_partition_list_destroy(list_); }
  PartitionList(const PartitionList&) = delete;
  PartitionList& operator=(const PartitionList&) = delete;

  rd_kafka_topic_partition_t* Add(const TopicPartitionId& id) {
    return rd_kafka_topic_partition_list_add(list_, id.topic.c_str(), id.partition);
  }
  rd_kafka_topic_partition_list_t* get() { return list_; }

 private:
  rd_kafka_topic_partition_list_t* list_;
};

}  // namespace delaybridge::plugin
