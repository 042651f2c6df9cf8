// BridgeFixture: the GoogleTest fixture of every test that runs the delaybridge binary as a
// child process, against the cluster its ClusterKind names: the mock cluster (tests/plugin,
// which use the real broker instead when DELAYBRIDGE_TEST_BOOTSTRAP is set) or the real broker
// (tests/e2e, RealBrokerBridgeFixture). SetUpBridge creates fresh topics (delay, target,
// alternative target, dead letter), a test directory with the bridge's config.yaml, the bridge
// (not started), a producer, and a collector reading the output topics from the beginning.
// More instances in the same group, each with a storage.dir of its own (other machines), are
// started by name.
//
// At the end a running bridge must stop cleanly (SIGTERM, exit code 0). On failure the logs'
// tails are printed and the test directory is kept.
//
// Thread-safety: the fixture's members are used by the test's main thread only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "tests/support/bridge_process.h"
#include "tests/support/delay_workload.h"
#include "tests/support/now_ms.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_consumer.h"
#include "tests/support/test_producer.h"

namespace delaybridge::testing {

// storage.checkpoint_interval_ms in every test config (the bridge's default, made explicit
// because the crash tests' duplicate bounds depend on it).
inline constexpr int64_t kCheckpointIntervalMs = 100;

// The test's topics and the bridge's config.yaml; an unset optional is the bridge's default.
struct BridgeTestOptions {
  int delay_partitions = 8;
  int target_partitions = 6;
  int alt_partitions = 6;
  int dlq_partitions = 2;
  std::map<std::string, std::string> delay_topic_configs = {};  // e.g. retention.ms
  std::map<std::string, std::string> alt_topic_configs = {};    // e.g. max.message.bytes
  std::map<std::string, std::string> dlq_topic_configs = {};
  // session.timeout.ms 6000 (the broker's minimum) so a SIGKILLed bridge's partitions are
  // reassigned quickly, with heartbeats every 500 ms; otherwise librdkafka's defaults (45 s).
  bool short_session_timeout = true;
  std::optional<uint32_t> max_record_bytes = std::nullopt;
  std::optional<size_t> max_preloaded_records = std::nullopt;
  bool kafka_stats = false;      // librdkafka statistics every 100 ms to kafka_stats_path()
  std::string storage_dir = {};  // empty: data/ in the test directory
  std::string extra_yaml = {};   // appended to the config
};

class BridgeFixture : public ::testing::Test {
 protected:
  explicit BridgeFixture(ClusterKind cluster_kind = ClusterKind::kMockUnlessEnvironment)
      : cluster_kind_(cluster_kind) {}

  // Creates the cluster, topics, test directory and config; does not start the bridge.
  void SetUpBridge(const BridgeTestOptions& options);
  void TearDown() override;

  // Starts the bridge and waits until it owns every delay-topic partition (logged "assigned"
  // once more per partition than before this start). meanwhile, when given, runs instead of
  // each 100 ms pause of the wait (a test that keeps sending).
  void StartBridge(const std::function<void()>& meanwhile = {});
  // Starts the bridge, then produces a probe record and waits until the bridge delivers it:
  // from then on it has joined the group and delivers in real time. meanwhile, when given, runs
  // every 200 ms or less while it waits.
  void StartBridgeAndWaitReady(std::chrono::seconds timeout = std::chrono::seconds(120),
                               const std::function<void()>& meanwhile = {});
  void StopBridge();  // SIGTERM; expects exit code 0

  // Another bridge instance in the same group with its own storage.dir (another machine):
  // config-<name>.yaml and data-<name>/ in the test directory, log <name>.log; instance_yaml is
  // appended to its config. Not started.
  std::unique_ptr<BridgeProcess> MakeInstance(const std::string& name,
                                              const std::string& instance_yaml = "") const;
  // Starts instance `name`, made by MakeInstance on its first start; the fixture keeps it.
  BridgeProcess& StartInstance(const std::string& name, const std::string& instance_yaml = "");
  void StopInstance(const std::string& name);  // SIGTERM; expects exit code 0

  // The end of the bridge's log, to attach to a failure.
  std::string LogTail() const;
  // The port of the running bridge's /metrics, /healthz and /readyz (metrics.listen picks a
  // free one), from its log; fails the test when it is not logged.
  uint16_t MetricsPort() const;
  std::string kafka_stats_path() const { return dir_->File("kafka-stats.jsonl"); }

  // Produces the workload's next `count` records to the delay topic and waits until the broker
  // has them all; a failure fails the test (call under ASSERT_NO_FATAL_FAILURE).
  void ProduceWorkload(DelayWorkload& workload, size_t count);
  // Polls the output topics (targets and dead letters) into received_ until done() or the
  // timeout.
  void ReceiveUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  void ReceiveFor(std::chrono::milliseconds quiet);
  // Receives until every record of workload arrived or timeout passes, then `linger` longer so
  // that a duplicate would be seen too; true when every record arrived in time.
  bool ReceiveWorkload(const DelayWorkload& workload, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds linger);
  // Distinct workload ids received so far.
  size_t DistinctIdsReceived() const { return seen_ids_.size(); }
  // The workload's check of everything received so far.
  DeliveryReport CheckReceived(const DelayWorkload& workload) const {
    return workload.CheckDeliveries(received_, TargetPartitions());
  }

  // Partition count of each target topic, for DelayWorkload::CheckDeliveries.
  std::map<std::string, int32_t> TargetPartitions() const;
  // A workload for these topics.
  WorkloadSpec Spec(uint64_t seed, int64_t max_delay_ms, int64_t min_delay_ms = 0) const;

  BridgeTestOptions options_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<TestCluster> cluster_;
  std::string delay_topic_, target_topic_, alt_topic_, dlq_topic_;
  std::string config_path_;
  std::unique_ptr<BridgeProcess> bridge_;
  std::map<std::string, std::unique_ptr<BridgeProcess>> instances_;
  std::unique_ptr<TestProducer> producer_;
  std::unique_ptr<TestConsumer> collector_;
  std::vector<TestRecord> received_;

 private:
  void WriteConfig(const std::string& path, const std::string& storage_dir,
                   const std::string& instance_yaml) const;
  void Absorb(std::vector<TestRecord> records);

  const ClusterKind cluster_kind_;
  std::string group_id_;
  std::unordered_set<int64_t> seen_ids_;
  size_t starts_ = 0;  // of bridge_
  int probes_ = 0;
};

// The fixture of the real-broker tests: fails when no broker is configured.
class RealBrokerBridgeFixture : public BridgeFixture {
 protected:
  RealBrokerBridgeFixture() : BridgeFixture(ClusterKind::kRealBroker) {}
};

// What every delivery test holds the report to, whatever it did to the bridge: no record
// missing, early, in the wrong topic or partition, altered, unknown, or delivered though
// certainly cancelled. Duplicates are the caller's: zero, or the bound a crash allows.
void ExpectNoneLostEarlyOrAltered(const DeliveryReport& report);

// What a crash at kill_ms allows: every duplicate's earliest copy went out before the crash, at
// most window_ms before it (delivered but not yet covered by the progress the restart resumes
// from).
void ExpectDuplicatesOnlyAround(const DeliveryReport& report, int64_t kill_ms, int64_t window_ms);

}  // namespace delaybridge::testing
