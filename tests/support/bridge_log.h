// What the tests read from a bridge's log: the time of a line, and the assignments librdkafka
// reported lost (a revocation with its lost flag: `WARN  N partition(s) lost: <partitions> (...`,
// plugin/bridge.cc). librdkafka before 2.10.0 drops a member's whole assignment when its offset
// commit meets a second generation bump of a cooperative rebalance (confluentinc/librdkafka#4059):
// the next owner of those partitions starts from the commit before, so what the member delivered
// since is delivered again (docs/bridge.md, "Duplicates after a failover").
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace delaybridge::testing {

// The time of a log line, which starts with UTC to the millisecond (2026-11-22T16:20:01.123Z);
// nothing for a line that does not.
std::optional<int64_t> LogLineTimeMs(const std::string& line);

// One lost assignment: when it was logged, and its partitions ("<topic>-<partition>").
struct LostPartitions {
  int64_t at_ms = 0;
  std::set<std::string> partitions;
};

// Every lost assignment in a bridge's log, in order.
std::vector<LostPartitions> LostAssignmentsIn(const std::string& log);

}  // namespace delaybridge::testing
