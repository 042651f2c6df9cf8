// GroupOffsetCommits: what committing progress needs from the consumer-group member
// (SourceConsumer): committing each partition's "resume at offset" with its metadata, with or
// without waiting for the broker. An interface, so the commit rules are unit-tested with a fake
// that records what was committed and when.
//
// Thread-safety: every method is called from the consumer's owner thread.
#pragma once

#include <map>

#include "core/status.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class GroupOffsetCommits {
 public:
  virtual ~GroupOffsetCommits() = default;

  // Commits without waiting; a failure is logged when the broker answers.
  virtual void CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) = 0;
  // Commits and waits for the broker's answer.
  virtual Status CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) = 0;
};

}  // namespace delaybridge::plugin
