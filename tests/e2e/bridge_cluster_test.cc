// Several bridge instances in one consumer group against the real broker, each with its own
// storage.dir (separate machines): Kafka holds every pending record, so an instance can die
// for good, be replaced by one with an empty disk, restart, or be added and removed under load,
// and nothing is lost or delivered early (docs/bridge.md, "Kafka holds the truth").
#include <atomic>
#include <iostream>
#include <map>
#include <thread>

#include "tests/e2e/bridge_cluster_fixture.h"

namespace delaybridge::testing {
namespace {

class BridgeClusterTest : public BridgeClusterFixture {};

TEST_F(BridgeClusterTest, ThreeInstancesOneKilledForGoodWhileRecordsArePending) {
  ASSERT_NO_FATAL_FAILURE(StartThreeInstances());

  DelayWorkload workload(Spec(1401, 20'000));
  ASSERT_NO_FATAL_FAILURE(ProduceBurst(workload, 20'000));
  ReceiveFor(milliseconds(1500));
  const int64_t kill_ms = NowMs();
  instances_["b"]->Kill();  // for good: its storage.dir is never used again
  std::cout << "killed b at " << kill_ms << " with " << DistinctIdsReceived()
            << " of 20000 delivered\n";

  const DeliveryReport report = AwaitAndCheck(workload, seconds(120));
  ExpectDuplicatesOnlyAroundHandOvers(report, kill_ms);
  size_t rebuilds = 0;
  for (const auto& name : {"c"}) {
    rebuilds += instances_[name]->CountInLog("rebuilding it from the delay topic");
  }
  rebuilds += bridge_->CountInLog("rebuilding it from the delay topic");
  EXPECT_GE(rebuilds, 1u) << "b's partitions were not rebuilt by a survivor";
  StopInstance("c");
}

// A replacement machine takes over the dead instance's identity (group_instance_id) with an
// empty disk: static membership hands it the partitions at once, and it rebuilds them.
TEST_F(BridgeClusterTest, ANewInstanceWithAnEmptyDiskReplacesADeadOne) {
  SetUpBridge(ClusterTopology());
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());
  StartInstance("b", "group_instance_id: \"bridge-b\"\n");
  ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b"}));
  ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));

  DelayWorkload workload(Spec(1402, 15'000));
  ASSERT_NO_FATAL_FAILURE(ProduceBurst(workload, 5'000));
  ReceiveFor(milliseconds(1000));
  const int64_t kill_ms = NowMs();
  instances_["b"]->Kill();
  StartInstance("b-replacement", "group_instance_id: \"bridge-b\"\n");
  const DeliveryReport report = AwaitAndCheck(workload, seconds(90));
  ExpectDuplicatesOnlyAroundHandOvers(report, kill_ms);
  EXPECT_GE(instances_["b-replacement"]->CountInLog("rebuilding it from the delay topic"), 1u);
  StopInstance("b-replacement");
}

TEST_F(BridgeClusterTest, RollingRestartOfThreeInstancesUnderLoadLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartThreeInstances());

  DelayWorkload workload(Spec(1403, 8'000));
  ASSERT_NO_FATAL_FAILURE(StartFeeding(workload));
  for (const auto& name : {"b", "c"}) {
    ReceiveFor(milliseconds(1500));
    ASSERT_NO_FATAL_FAILURE(StopInstance(name));
    StartInstance(name);  // same storage.dir and member id: it gets its partitions back
  }
  ReceiveFor(milliseconds(1500));
  Result<int> stopped = bridge_->Terminate(seconds(60));
  ASSERT_TRUE(stopped.ok() && *stopped == 0);
  ASSERT_TRUE(bridge_->Start().ok());
  ReceiveFor(milliseconds(1500));
  ASSERT_NO_FATAL_FAILURE(StopFeeding());
  AwaitAndCheck(workload, seconds(90));
  StopInstance("b");
  StopInstance("c");
}

TEST_F(BridgeClusterTest, ScalingOneToThreeToOneUnderLoadLosesNothing) {
  SetUpBridge(ClusterTopology());
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  DelayWorkload workload(Spec(1404, 8'000));
  ASSERT_NO_FATAL_FAILURE(StartFeeding(workload));
  ReceiveFor(milliseconds(1500));
  StartInstance("b");
  StartInstance("c");
  ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b", "c"}));
  ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));
  ReceiveFor(milliseconds(1500));
  ASSERT_NO_FATAL_FAILURE(StopInstance("b"));
  ASSERT_NO_FATAL_FAILURE(StopInstance("c"));
  // Static members do not leave the group: their partitions move after session.timeout.ms.
  ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));
  ASSERT_NO_FATAL_FAILURE(StopFeeding());
  AwaitAndCheck(workload, seconds(90));
  EXPECT_EQ(bridge_->CountInLog("INFO  assigned " + delay_topic_),
            static_cast<size_t>(kPartitions) + bridge_->CountInLog("INFO  revoked " + delay_topic_))
      << "the remaining instance should own every partition again";
}

// The default session timeout (45 s) and static membership: a bridge killed and restarted at
// once gets its partitions back without waiting for the dead member to time out.
TEST_F(BridgeClusterTest, KilledAndRestartedAtOnceDeliversWithinFiveSeconds) {
  BridgeTestOptions options = ClusterTopology();
  options.short_session_timeout = false;
  SetUpBridge(options);
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());
  DelayWorkload workload(Spec(1405, 3'000));
  ASSERT_NO_FATAL_FAILURE(ProduceBurst(workload, 500));
  bridge_->Kill();
  const auto restarted = std::chrono::steady_clock::now();
  ASSERT_TRUE(bridge_->Start().ok());
  ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(60)));
  const auto served_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - restarted)
          .count();
  std::cout << "every partition delivered again " << served_ms << " ms after the restart\n";
  EXPECT_LE(served_ms, 5'000);
  AwaitAndCheck(workload, seconds(60));
}

TEST_F(BridgeClusterTest, ADelayTopicWithShortRetentionIsRefused) {
  BridgeTestOptions topology = ClusterTopology();
  topology.delay_topic_configs = {{"retention.ms", "3600000"}};
  SetUpBridge(topology);
  ASSERT_FALSE(HasFatalFailure());
  for (const bool check : {true, false}) {
    std::vector<std::string> args = {"--config", config_path_};
    if (check) args.push_back("--check");
    const CommandResult result = RunBridgeCommand(DELAYBRIDGE_BINARY, args, seconds(60));
    EXPECT_EQ(result.exit_code, 2) << result.output;
    EXPECT_NE(result.output.find("delay topic " + delay_topic_ +
                                 " has retention.ms=3600000 (1h), "
                                 "shorter than max_delay 1h + retention_margin 1d"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("allow_unsafe_retention"), std::string::npos) << result.output;
  }
}

}  // namespace
}  // namespace delaybridge::testing
