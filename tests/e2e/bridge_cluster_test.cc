// Several bridge instances in one consumer group against the real broker, each with its own
// storage.dir (separate machines): Kafka holds every pending record, so an instance can die
// for good, be replaced by one with an empty disk, restart, or be added and removed under load,
// and nothing is lost or delivered early (docs/bridge.md, "Kafka holds the truth").
#include <atomic>
#include <iostream>
#include <map>
#include <thread>

#include "tests/e2e/bridge_test_base.h"

namespace delaybridge::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 6;
// How long before a crash a duplicate's first copy may have gone out: the progress commit
// interval (the checkpoint interval), a late record's second passing the checkpoint, and the
// acknowledgement latency of a loaded sanitizer build.
constexpr int64_t kDuplicateWindowMs = 3'000;

BridgeTopology ClusterTopology() {
  return {.delay_partitions = kPartitions, .target_partitions = 4, .alt_partitions = 2};
}

class BridgeClusterTest : public BridgeTestBase {
 protected:
  void TearDown() override {
    for (auto& [name, instance] : instances_) {
      if (HasFailure()) {
        const std::string log = instance->Log();
        std::cerr << "---- instance " << name << " log tail ----\n"
                  << log.substr(log.size() > 3000 ? log.size() - 3000 : 0) << "\n";
      }
      instance->Kill();
    }
    BridgeTestBase::TearDown();
  }

  testing::BridgeProcess& Start(const std::string& name, const std::string& yaml = "") {
    auto& instance = instances_[name];
    if (!instance) instance = MakeInstance(name, yaml);
    const Status started = instance->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    return *instance;
  }

  // Produces a probe to every delay partition and waits until all were delivered: every
  // partition has an owner that reads and delivers.
  void WaitAllPartitionsServed(seconds timeout) {
    const std::string round = std::to_string(++probe_rounds_);
    std::set<std::string> wanted;
    for (int p = 0; p < kPartitions; ++p) {
      OutgoingRecord probe = ProbeRecord(delay_topic_, "r" + round + "p" + std::to_string(p));
      probe.partition = p;
      wanted.insert(probe.value);
      ASSERT_TRUE(producer_->Produce(probe).ok());
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
    ReceiveUntil(
        [&] {
          for (const auto& r : received_) wanted.erase(r.value);
          return wanted.empty();
        },
        timeout);
    ASSERT_TRUE(wanted.empty()) << wanted.size() << " partitions not served within "
                                << timeout.count() << " s, e.g. " << *wanted.begin();
  }

  // The suite's bridge and instances b and c, each owning partitions and delivering.
  void StartThreeInstances() {
    SetUpBridge(ClusterTopology());
    ASSERT_FALSE(HasFatalFailure());
    StartBridgeAndWaitReady();
    ASSERT_FALSE(HasFatalFailure());
    Start("b");
    Start("c");
    ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b", "c"}));
    ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));
  }

  // Waits until each named instance owns at least one partition.
  void WaitAssigned(const std::vector<std::string>& names) {
    for (const auto& name : names) {
      ASSERT_TRUE(instances_.at(name)->WaitForLog("INFO  assigned " + delay_topic_, seconds(90)))
          << "instance " << name << " got no partition";
    }
  }

  // Produces n records at once.
  void ProduceBurst(DelayWorkload& workload, size_t n) {
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
    ASSERT_TRUE(producer_->Flush(seconds(60)).ok());
  }

  // A producer thread offering about 1,000 records/s until StopFeeding.
  void StartFeeding(DelayWorkload& workload) {
    auto producer = TestProducer::Create(bootstrap_);
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    feeder_producer_ = std::move(producer).value();
    feeder_ = std::thread([this, &workload] {
      while (!stop_feeding_ && feed_status_.ok()) {
        for (int i = 0; i < 25 && feed_status_.ok(); ++i) {
          feed_status_ = feeder_producer_->Produce(workload.Next());
        }
        feeder_producer_->raw().poll(0);
        std::this_thread::sleep_for(milliseconds(25));
      }
    });
  }
  void StopFeeding() {
    stop_feeding_ = true;
    if (feeder_.joinable()) feeder_.join();
    ASSERT_TRUE(feed_status_.ok()) << feed_status_.ToString();
    ASSERT_TRUE(feeder_producer_->Flush(seconds(60)).ok());
  }

  // Waits for every workload record, then checks: none missing, none early, all intact.
  DeliveryReport AwaitAndCheck(const DelayWorkload& workload, seconds timeout) {
    ReceiveUntil([&] { return DistinctIdsReceived() == workload.size(); }, timeout);
    ReceiveFor(seconds(2));
    const DeliveryReport report = workload.CheckDeliveries(received_, TargetPartitions());
    std::cout << ::testing::UnitTest::GetInstance()->current_test_info()->name() << ": "
              << report.ToString() << "\n";
    size_t shown = 0;
    for (const auto& [id, copies] : report.duplicated) {
      if (++shown > 5) break;
      std::cout << "  duplicate id " << id << " created " << workload.CreatedMs(id)
                << " deliver-at " << workload.DeliverAtMs(id) << ":";
      for (const auto& c : copies) std::cout << " " << c.timestamp_ms << "@p" << c.partition;
      std::cout << " source " << HeaderValue(copies.front().headers, "x-delay-source").value_or("")
                << "\n";
    }
    EXPECT_EQ(report.missing(), 0u);
    EXPECT_EQ(report.early, 0u);
    EXPECT_EQ(report.wrong_topic, 0u);
    EXPECT_EQ(report.wrong_partition, 0u);
    EXPECT_EQ(report.wrong_content, 0u);
    return report;
  }

  // Every duplicate's earlier copy went out shortly before the crash at kill_ms.
  void ExpectDuplicatesOnlyAround(const DeliveryReport& report, int64_t kill_ms) {
    for (const auto& [id, copies] : report.duplicated) {
      int64_t earliest = copies.front().timestamp_ms;
      for (const auto& c : copies) earliest = std::min(earliest, c.timestamp_ms);
      EXPECT_LE(earliest, kill_ms) << "id " << id << " delivered twice after the crash";
      EXPECT_GE(earliest, kill_ms - kDuplicateWindowMs)
          << "id " << id << " first delivered " << kill_ms - earliest << " ms before the crash";
    }
  }

  void StopInstance(const std::string& name) {
    Result<int> code = instances_.at(name)->Terminate(seconds(60));
    ASSERT_TRUE(code.ok()) << code.status().ToString();
    EXPECT_EQ(*code, 0) << "instance " << name << " exit code after SIGTERM";
  }

  std::map<std::string, std::unique_ptr<testing::BridgeProcess>> instances_;
  int probe_rounds_ = 0;
  std::unique_ptr<TestProducer> feeder_producer_;
  std::thread feeder_;
  std::atomic<bool> stop_feeding_{false};
  Status feed_status_;
};

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
  ExpectDuplicatesOnlyAround(report, kill_ms);
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
  Start("b", "group_instance_id: \"bridge-b\"\n");
  ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b"}));
  ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));

  DelayWorkload workload(Spec(1402, 15'000));
  ASSERT_NO_FATAL_FAILURE(ProduceBurst(workload, 5'000));
  ReceiveFor(milliseconds(1000));
  const int64_t kill_ms = NowMs();
  instances_["b"]->Kill();
  Start("b-replacement", "group_instance_id: \"bridge-b\"\n");
  const DeliveryReport report = AwaitAndCheck(workload, seconds(90));
  ExpectDuplicatesOnlyAround(report, kill_ms);
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
    Start(name);  // same storage.dir and member id: it gets its partitions back
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
  Start("b");
  Start("c");
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
  SetUpBridge(ClusterTopology(), "", /*short_session_timeout=*/false);
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
  BridgeTopology topology = ClusterTopology();
  topology.delay_topic_configs = {{"retention.ms", "3600000"}};
  SetUpBridge(topology);
  ASSERT_FALSE(HasFatalFailure());
  for (const bool check : {true, false}) {
    std::vector<std::string> args = {"--config", config_path_};
    if (check) args.push_back("--check");
    const testing::CommandResult result =
        testing::RunBridgeCommand(DELAYBRIDGE_BIN, args, seconds(60));
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
}  // namespace delaybridge::e2e
