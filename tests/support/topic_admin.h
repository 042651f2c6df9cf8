// Topic administration for the tests on a real broker: names no earlier run used, and topic
// creation (with topic configs) through the admin API that waits until every partition is led.
//
// Thread-safety: thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace delaybridge::testing {

struct TopicSpec {
  std::string name;
  int partitions = 1;
  std::map<std::string, std::string> configs = {};  // topic configs, e.g. retention.ms
};

// Creates the topics (replication factor 1) on the broker at bootstrap and waits until its
// metadata lists every one of them with all its partitions led.
Status CreateTopics(const std::string& bootstrap, const std::vector<TopicSpec>& topics);

// A name no earlier run used: prefix, pid, a nanosecond clock reading and a counter.
std::string UniqueName(std::string_view prefix);

}  // namespace delaybridge::testing
