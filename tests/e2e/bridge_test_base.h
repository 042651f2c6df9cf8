// BridgeTestBase: GoogleTest fixture for end-to-end tests of the delaybridge binary against the
// real broker. It creates fresh topics (delay, target, alternative target, dead letter), writes
// a config pointing at DELAYBRIDGE_TEST_BOOTSTRAP, runs the bridge as a child process, and
// collects everything that arrives on the output topics with a group-less consumer.
//
// On failure the bridge's log tail is printed and the working directory is kept.
//
// Thread-safety: the fixture's members are used by the test's main thread only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "tests/e2e/delay_workload.h"
#include "tests/e2e/kafka_client.h"
#include "tests/support/bridge_process.h"

namespace delaybridge::e2e {

// storage.checkpoint_interval_ms in every test config (the bridge's default, made explicit
// because the crash test's duplicate bound depends on it).
inline constexpr int64_t kCheckpointIntervalMs = 100;

struct BridgeTopology {
  int delay_partitions = 4;
  int target_partitions = 4;
  int alt_partitions = 3;
  int dlq_partitions = 2;
  std::map<std::string, std::string> delay_topic_configs = {};  // e.g. retention.ms
  std::map<std::string, std::string> alt_topic_configs = {};    // e.g. max.message.bytes
  std::map<std::string, std::string> dlq_topic_configs = {};
};

class BridgeTestBase : public ::testing::Test {
 protected:
  // Creates topics and the working directory and writes the config; does not start the bridge.
  // short_session_timeout: session.timeout.ms 6000 (the broker's minimum) so a SIGKILLed
  // bridge's partitions are reassigned quickly; otherwise librdkafka's default (45 s).
  void SetUpBridge(const BridgeTopology& topology, const std::string& extra_yaml = "",
                   bool short_session_timeout = true);
  void TearDown() override;

  // Another bridge instance in the same group with its own storage.dir (another machine):
  // config-<name>.yaml and data-<name>/ in the work directory, log <name>.log; instance_yaml is
  // appended to its config. Not started.
  std::unique_ptr<testing::BridgeProcess> MakeInstance(const std::string& name,
                                                       const std::string& instance_yaml = "") const;

  // Starts the bridge, then produces a probe record and waits until the bridge delivers it:
  // from then on the bridge has joined the group and delivers in real time. meanwhile, when
  // given, runs every 200 ms or less while it waits (a test that keeps producing).
  void StartBridgeAndWaitReady(std::chrono::seconds timeout = std::chrono::seconds(120),
                               const std::function<void()>& meanwhile = {});

  // Polls the output topics into received_ until done() or the timeout.
  void ReceiveUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  void ReceiveFor(std::chrono::milliseconds quiet);
  // Distinct workload ids received so far.
  size_t DistinctIdsReceived() const { return seen_ids_.size(); }

  // Stop and start the suite's broker (scripts/kafka.sh stop/start: same data dir and port).
  // TearDown starts it again if a test stopped it and failed before restarting it, so later
  // tests still have a broker.
  Status StopBroker();
  Status StartBroker();

  std::map<std::string, int32_t> TargetPartitions() const;
  WorkloadSpec Spec(uint64_t seed, int64_t max_delay_ms) const;

  std::string bootstrap_;
  std::string delay_topic_;
  std::string target_topic_;
  std::string alt_topic_;
  std::string dlq_topic_;
  BridgeTopology topology_;
  std::filesystem::path work_dir_;
  std::string config_path_;
  std::string group_id_;
  std::unique_ptr<testing::BridgeProcess> bridge_;
  std::unique_ptr<TestProducer> producer_;
  std::unique_ptr<TestConsumer> collector_;
  std::vector<ConsumedRecord> received_;

 private:
  void WriteConfig(const std::string& path, const std::string& data_dir,
                   const std::string& instance_yaml) const;
  void Absorb(std::vector<ConsumedRecord> records);
  Status KafkaScript(const std::string& command);

  std::string extra_yaml_;
  bool short_session_timeout_ = true;
  std::unordered_set<int64_t> seen_ids_;
  int probes_ = 0;
  bool broker_stopped_ = false;
};

// What every real-broker delivery test holds the report to, whatever it did to the bridge: no
// record missing, early, in the wrong topic or partition, altered, or unknown. Duplicates are
// the caller's: zero, or the bound a crash allows.
void ExpectNoneLostEarlyOrAltered(const DeliveryReport& report);

}  // namespace delaybridge::e2e
