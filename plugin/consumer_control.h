// ConsumerControl: what the bridge's assignment, commit, revocation and transaction parts need
// from the consumer-group member (SourceConsumer): reading the group's committed progress and a
// partition's watermarks and position, committing each partition's "resume at offset" with its
// metadata, the member's group metadata for a transaction, moving reading back after a
// rollback, and telling it the brokers answered. An interface, so those rules are unit-tested
// with a fake that records what was asked and when.
//
// Thread-safety: every method is called from the consumer's owner thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/status.h"
#include "plugin/group_metadata.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class ConsumerControl {
 public:
  struct Watermarks {
    int64_t low = 0;   // the partition's start
    int64_t high = 0;  // its end (the last stable offset with read_committed)
  };

  virtual ~ConsumerControl() = default;

  // The group's committed offsets and their metadata (blocking, up to timeout_ms); partitions
  // without a commit are absent. Unavailable when the coordinator did not answer.
  virtual Result<std::map<TopicPartitionId, CommittedOffset>> Committed(
      const std::vector<TopicPartitionId>& partitions, int timeout_ms) = 0;
  // Asks the partition's leader for its watermarks. Blocks up to timeout_ms.
  virtual Result<Watermarks> QueryWatermarks(const TopicPartitionId& id, int timeout_ms) const = 0;
  // The offset of the next record the consumer returns for the partition (past transaction
  // markers); nullopt before it returned one.
  virtual std::optional<int64_t> Position(const TopicPartitionId& id) const = 0;

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
