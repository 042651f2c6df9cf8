// delivery.guarantee: exactly_once against the real broker: whatever happens to the bridge, a
// read_committed consumer of the targets (the collector) sees every record once, never early
// (docs/bridge.md, "Exactly once"). Crashes under load, an instance killed for good, and a
// zombie: an instance frozen past its session timeout whose partitions moved, then resumed.
#include <iostream>
#include <random>

#include "tests/e2e/bridge_cluster_fixture.h"

namespace delaybridge::testing {
namespace {

constexpr char kExactlyOnce[] = "delivery:\n  guarantee: exactly_once\n";

class BridgeExactlyOnceTest : public BridgeClusterFixture {
 protected:
  void SetUpExactlyOnce(const std::string& delivery_yaml = "") {
    BridgeTestOptions options = ClusterTopology();
    options.extra_yaml = std::string(kExactlyOnce) + delivery_yaml;
    SetUpBridge(options);
    ASSERT_FALSE(HasFatalFailure());
    StartBridgeAndWaitReady();
  }

  // The suite's bridge and instance b, both owning partitions and delivering.
  void StartTwoInstances(const std::string& delivery_yaml = "") {
    ASSERT_NO_FATAL_FAILURE(SetUpExactlyOnce(delivery_yaml));
    StartInstance("b");
    ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b"}));
    ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));
  }

  void ExpectEachOnce(const DelayWorkload& workload) {
    const DeliveryReport report = AwaitAndCheck(workload, seconds(180));
    EXPECT_EQ(report.duplicates, 0u) << "a read_committed consumer saw a record twice";
  }
};

TEST_F(BridgeExactlyOnceTest, TenSigkillsUnderLoadNeitherLoseNorDuplicate) {
  constexpr uint64_t kSeed = 1501;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  ASSERT_NO_FATAL_FAILURE(SetUpExactlyOnce());
  DelayWorkload workload(Spec(kSeed, 8'000));
  // About 640 records/s: 20,000 records over the ten crashes and a little after.
  ASSERT_NO_FATAL_FAILURE(StartFeeding(workload, 20'000, 16));
  std::mt19937_64 rng(kSeed);
  for (int k = 0; k < 10; ++k) {
    ReceiveFor(milliseconds(1000 + rng() % 2000));
    bridge_->Kill();
    std::cout << "kill " << k + 1 << " with " << fed_ << " records produced, "
              << DistinctIdsReceived() << " delivered\n";
    ASSERT_NO_FATAL_FAILURE(StartBridgeAndWaitReady());
  }
  ASSERT_NO_FATAL_FAILURE(WaitFed(20'000, seconds(120)));
  ASSERT_NO_FATAL_FAILURE(StopFeeding());
  std::cout << "fed " << workload.size() << " records\n";
  ExpectEachOnce(workload);
  EXPECT_GE(bridge_->CountInLog("rebuilding it from the delay topic"), 1u)
      << "a crashed exactly_once store must be rebuilt, not reused";
}

// Small transactions: most are cut by transaction_max_records, not by the interval.
TEST_F(BridgeExactlyOnceTest, OneOfTwoInstancesKilledForGoodUnderLoad) {
  ASSERT_NO_FATAL_FAILURE(StartTwoInstances("  transaction_max_records: 20\n"));
  DelayWorkload workload(Spec(1502, 15'000));
  ASSERT_NO_FATAL_FAILURE(StartFeeding(workload, 10'000));
  ReceiveFor(milliseconds(3000));
  instances_["b"]->Kill();  // for good
  std::cout << "killed b with " << fed_ << " records produced, " << DistinctIdsReceived()
            << " delivered\n";
  ASSERT_NO_FATAL_FAILURE(WaitFed(10'000, seconds(60)));
  ASSERT_NO_FATAL_FAILURE(StopFeeding());
  ExpectEachOnce(workload);
  EXPECT_GE(bridge_->CountInLog("rebuilding it from the delay topic"), 1u)
      << "b's partitions were not rebuilt by the survivor";
}

// Frozen longer than session.timeout.ms (6 s) but shorter than the transaction timeout (10 s):
// the broker has not aborted the zombie's open transaction when it resumes, so only the group
// metadata sent with its offsets (KIP-447) keeps it from committing deliveries its partitions'
// new owner makes again.
TEST_F(BridgeExactlyOnceTest, AZombieResumedAfterItsPartitionsMovedCommitsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartTwoInstances());
  DelayWorkload workload(Spec(1503, 10'000));
  ASSERT_NO_FATAL_FAILURE(StartFeeding(workload, 12'000));
  ReceiveFor(milliseconds(2000));
  BridgeProcess& zombie = *instances_["b"];
  zombie.Freeze();
  std::cout << "froze b with " << fed_ << " records produced\n";
  ReceiveFor(milliseconds(8000));
  zombie.Thaw();
  ASSERT_NO_FATAL_FAILURE(WaitFed(12'000, seconds(60)));
  ASSERT_NO_FATAL_FAILURE(StopFeeding());
  ExpectEachOnce(workload);
  // The zombie tried to commit for partitions it no longer owned, or learned it had lost them,
  // and aborted: either way its transaction was refused, not merely never attempted. The broker
  // may refuse the abort itself as well (INVALID_TXN_STATE, which librdkafka makes fatal: the
  // zombie stops with an error), which is a refusal too.
  const std::string log = zombie.Log();
  size_t aborted = log.find("transaction aborted");
  if (aborted == std::string::npos) aborted = log.find("transaction failed: abort transaction");
  ASSERT_NE(aborted, std::string::npos) << "b never aborted a transaction";
  std::cout << "b after thawing: " << (zombie.running() ? "running" : "exited") << "; "
            << log.substr(aborted, log.find('\n', aborted) - aborted) << "\n";
}

}  // namespace
}  // namespace delaybridge::testing
