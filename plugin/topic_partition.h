// TopicPartitionId and CommittedOffset: the names of a delay-topic partition and of a consumer
// group's position in it, shared by the consumer, the transactional producer and the logic that
// decides what to commit (which need neither librdkafka nor Asio for them).
//
// Thread-safety: plain values.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace delaybridge::plugin {

struct TopicPartitionId {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartitionId&) const = default;
  std::string ToString() const { return topic + "-" + std::to_string(partition); }
};

// A committed offset ("resume at offset") and the metadata committed with it.
struct CommittedOffset {
  int64_t offset = 0;
  std::string metadata;
};

}  // namespace delaybridge::plugin
