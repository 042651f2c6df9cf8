// Cancels (x-delay-cancel) against the real broker, at least once and exactly once: 10,000
// records due 5-30 s ahead; a seeded 30% cancelled at random moments before they fall due (each
// cancel produced to its target's partition, naming the offset the produce acknowledgement
// gave), a few hundred more once their delivery was seen (too late), cancels naming cancel
// records (unknown) and malformed cancels (dead-lettered with the reason). No cancelled record
// comes out, every other one does, once, never early and intact, and the stats line counts
// cancelled, cancel_too_late and cancel_unknown exactly. Then the same with a kill -9 while most
// records are pending: cancels survive it; duplicates only as a crash allows (none exactly once).
// The runs are tests/support/bridge_cancel_fixture.h's, shared with the mock-cluster suite.
#include "tests/e2e/bridge_cluster_fixture.h"
#include "tests/support/bridge_cancel_fixture.h"

namespace delaybridge::testing {
namespace {

class BridgeCancelTest : public BridgeCancelFixture {
 protected:
  BridgeCancelTest() : BridgeCancelFixture(ClusterKind::kRealBroker) {}

  static CancelRun Run(uint64_t seed, bool exactly_once) {
    return {.seed = seed,
            .options = ClusterTopology(),
            .exactly_once = exactly_once,
            .duplicate_window_ms = kDuplicateWindowMs};
  }
};

TEST_F(BridgeCancelTest, AtLeastOnceCancelledNeverDeliveredOthersOnceCountersMatch) {
  RunWithoutCrash(Run(20261127, false));
}

TEST_F(BridgeCancelTest, AtLeastOnceCancelsSurviveKillDashNine) {
  RunWithKill(Run(20261128, false));
}

// A read_committed reader (the collector: librdkafka's default isolation level).
TEST_F(BridgeCancelTest, ExactlyOnceCancelledNeverDeliveredOthersOnceCountersMatch) {
  RunWithoutCrash(Run(20261129, true));
}

TEST_F(BridgeCancelTest, ExactlyOnceCancelsSurviveKillDashNine) {
  RunWithKill(Run(20261130, true));
}

}  // namespace
}  // namespace delaybridge::testing
