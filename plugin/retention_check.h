// Retention check: with Kafka holding the truth, a delay-topic record must stay in the topic
// until it is delivered, because a new owner of its partition rebuilds the schedule from there.
// Before the bridge starts (and in --check) it reads each delay topic's retention.ms,
// retention.bytes and cleanup.policy (DescribeConfigs) and refuses a topic where Kafka could
// delete a record before it is due: time retention shorter than max_delay plus a margin, any
// size retention, or compaction.
//
// Thread-safety: a blocking free function and a pure one; call from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::plugin {

struct TopicRetention {
  std::string topic;
  int64_t retention_ms = -1;     // -1: unlimited
  int64_t retention_bytes = -1;  // -1: unlimited
  std::string cleanup_policy;    // "delete", "compact" or "compact,delete"
};

// Asks the brokers. Unavailable when they did not answer within timeout_ms; NotFound for a
// topic that does not exist; FailedPrecondition when the broker does not support
// DescribeConfigs (librdkafka's mock cluster behind `bootstrap.servers: embedded`).
Result<std::vector<TopicRetention>> DescribeRetention(
    const std::map<std::string, std::string>& kafka, const std::set<std::string>& topics,
    int timeout_ms);

// One line per unsafe topic, naming the setting to change; empty when every topic is safe.
std::vector<std::string> RetentionProblems(const std::vector<TopicRetention>& topics,
                                           int64_t max_delay_ms, int64_t margin_ms);

}  // namespace delaybridge::plugin
