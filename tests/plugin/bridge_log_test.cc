// The tests' reading of a bridge's log (tests/support/bridge_log.h): line times, and partitions
// given up without their progress committed, on lines as plugin/bridge.cc,
// plugin/offset_committer.cc and plugin/partition_revoker.cc write them.
#include "tests/support/bridge_log.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace delaybridge::testing {
namespace {

TEST(BridgeLogTest, ReadsTheTimeOfALine) {
  // 2026-11-22T16:20:01Z is 1795364401 s after the epoch.
  EXPECT_EQ(LogLineTimeMs("2026-11-22T16:20:01.123Z INFO  bridge started"), 1795364401123);
  EXPECT_EQ(LogLineTimeMs("2026-11-22T16:20:01.123Z"), 1795364401123);
  EXPECT_EQ(LogLineTimeMs("2026-11-22T16:20:01.123456Z INFO  x"), std::nullopt);
  EXPECT_EQ(LogLineTimeMs("2026-11-22T16:20:01.123+01:00 INFO  x"), std::nullopt);
  EXPECT_EQ(LogLineTimeMs(" 2026-11-22T16:20:01.123Z INFO  x"), std::nullopt);
  EXPECT_EQ(LogLineTimeMs("%4|1795364401.123|GETPID|rdkafka#producer-1| retrying"), std::nullopt);
}

TEST(BridgeLogTest, FindsLostAssignmentsAndRevocationsWhoseCommitWasRefused) {
  const std::string log =
      "2026-11-22T16:20:00.000Z INFO  revoked d-5: checkpoint=1/0 committed_offset=7 (x)\n"
      "2026-11-22T16:20:00.001Z INFO  released 0 records from memory\n"
      "2026-11-22T16:20:01.000Z WARN  2 partition(s) lost: d-0, d-1 (librdkafka dropped the "
      "assignment: a session or poll timeout, or an offset commit refused during a rebalance); "
      "their next owner, maybe this instance, starts from the last commit that succeeded\n"
      "2026-11-22T16:20:02.000Z WARN  offset commit of 2 partition(s) failed: Broker: "
      "Specified group generation id is not valid\n"
      "2026-11-22T16:20:03.000Z WARN  revoke: Unavailable: commit offsets: Broker: Specified "
      "group generation id is not valid (the next owner starts from the previous commit)\n"
      "2026-11-22T16:20:03.010Z INFO  revoked d-2: checkpoint=1/0 committed_offset=0 (x)\n"
      "2026-11-22T16:20:03.020Z INFO  revoked d-3: checkpoint=1/0 committed_offset=none\n"
      "2026-11-22T16:20:03.030Z INFO  released 10 records from memory\n"
      "2026-11-22T16:20:04.000Z INFO  revoked d-4: checkpoint=1/0 committed_offset=9 (x)\n";
  const std::vector<UncommittedHandOver> hand_overs = UncommittedHandOversIn(log);
  ASSERT_EQ(hand_overs.size(), 2u);
  EXPECT_EQ(hand_overs[0].at_ms, 1795364401000);
  EXPECT_EQ(hand_overs[0].partitions, (std::set<std::string>{"d-0", "d-1"}));
  EXPECT_EQ(hand_overs[1].at_ms, 1795364403020);
  EXPECT_EQ(hand_overs[1].partitions, (std::set<std::string>{"d-2", "d-3"}));
}

TEST(BridgeLogTest, ARefusedRevocationCutShortByTheLogsEndStillCounts) {
  const std::string log =
      "2026-11-22T16:20:03.000Z WARN  revoke: Unavailable: commit offsets: Broker: timed out\n"
      "2026-11-22T16:20:03.010Z INFO  revoked d-2: checkpoint=1/0 committed_offset=none\n";
  const std::vector<UncommittedHandOver> hand_overs = UncommittedHandOversIn(log);
  ASSERT_EQ(hand_overs.size(), 1u);
  EXPECT_EQ(hand_overs[0].partitions, (std::set<std::string>{"d-2"}));
}

}  // namespace
}  // namespace delaybridge::testing
