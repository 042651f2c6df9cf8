// ConsumerControl: what the bridge's commit, revocation and transaction parts need from the
// consumer-group member (SourceConsumer): committing each partition's "resume at offset" with
// its metadata, the member's group metadata for a transaction, moving reading back after a
// rollback, and telling it the brokers answered. An interface, so those rules are unit-tested
// with a fake that records what was asked and when.
//
// Thread-safety: every method is called from the consumer's owner thread.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/status.h"
#include "plugin/group_metadata.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class ConsumerControl {
 public:
  virtual ~ConsumerControl() = default;

  // Commits without waiting; a failure is logged when the broker answers.
  virtual void CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) = 0;
  // Commits and waits for the broker's answer.
  virtual Status CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) = 0;
  // For a transaction's offsets (exactly_once). Unavailable while not a member of the group.
  virtual Result<GroupMetadata> CurrentGroupMetadata() const = 0;
  // Moves the fetch position of assigned partitions (after they were reloaded).
  virtual Status Seek(const std::vector<TopicPartitionId>& partitions,
                      const std::map<TopicPartitionId, int64_t>& offsets) = 0;
  // A request to the brokers succeeded (e.g. a transaction committed): they answer again.
  virtual void BrokersAnswered() = 0;
};

}  // namespace delaybridge::plugin
