// What the tests read from a bridge's log: the time of a line, and the partitions it gave up
// without committing their progress. Their next owner starts from the commit before, so what
// this instance delivered since is delivered again (docs/bridge.md, "Duplicates after a
// failover"). librdkafka before 2.10.0 causes both kinds when an offset commit meets a second
// generation bump of a cooperative rebalance (confluentinc/librdkafka#4059): the member's commits
// are refused, and it loses its whole assignment.
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

// Partitions ("<topic>-<partition>") given up without their progress committed, and when.
struct UncommittedHandOver {
  int64_t at_ms = 0;
  std::set<std::string> partitions;
};

// In log order: each lost assignment (`WARN  N partition(s) lost: <partitions> (...`,
// plugin/bridge.cc), and each revocation whose commit was refused (`WARN  revoke: ... commit
// offsets ...`, then an `INFO  revoked <partition>: ...` line per partition up to `INFO  released`,
// plugin/partition_revoker.cc).
std::vector<UncommittedHandOver> UncommittedHandOversIn(const std::string& log);

}  // namespace delaybridge::testing
