// BridgeTestEnv: what every bridge integration test needs: a test cluster with uniquely named
// delay/target/dead-letter topics, a generated config.yaml, the bridge as a child process, a
// producer, and a reader of the output topics.
//
// Thread-safety: one test thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/plugin/delay_workload.h"
#include "tests/support/bridge_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_clients.h"
#include "tests/support/test_cluster.h"

namespace delaybridge::testing {

struct BridgeTestOptions {
  int delay_partitions = 8;
  int target_partitions = 6;
  std::string max_delay = "1h";
  uint32_t max_record_bytes = 1024 * 1024 - 1024;
  size_t max_preloaded_records = 1'000'000;
  bool kafka_stats = false;  // librdkafka statistics every 100 ms to kafka_stats_path()
  std::string storage_dir;   // empty: data/ in the test directory
};

class BridgeTestEnv : public ::testing::Test {
 protected:
  // Creates topics and the config; call from the test (options differ per test).
  void Prepare(const BridgeTestOptions& options);
  void TearDown() override;

  // Starts the bridge and waits until it owns every delay-topic partition.
  void StartBridge();
  // Another bridge instance in the same group, with its own storage.dir (another machine):
  // config-<name>.yaml, data-<name>/, <name>.log in the test directory. Not started.
  std::unique_ptr<BridgeProcess> MakeInstance(const std::string& name) const;
  void StopBridge();  // SIGTERM; expects exit code 0
  // Fails the test with the bridge log attached.
  std::string LogTail() const;

  // The port of the running bridge's /metrics, /healthz and /readyz (metrics.listen picks a
  // free one), from its log; fails the test when it is not logged.
  uint16_t MetricsPort() const;

  int64_t NowMs() const;
  std::string kafka_stats_path() const { return dir_->File("kafka-stats.jsonl"); }

  // Reads both target topics until `workload`'s records have all arrived (distinct) or `timeout`
  // passes, then `linger` longer so that a duplicate would be seen too. *all says whether every
  // record arrived in time.
  std::vector<TestRecord> CollectDeliveries(const DelayWorkload& workload, size_t records,
                                            std::chrono::milliseconds timeout,
                                            std::chrono::milliseconds linger, bool* all);

  void WriteConfig(const std::string& path, const std::string& storage_dir) const;

  BridgeTestOptions options_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<TestCluster> cluster_;
  std::unique_ptr<BridgeProcess> bridge_;
  std::unique_ptr<TestProducer> producer_;
  std::string delay_topic_, target_topic_, alt_topic_, dlq_topic_;
  std::string config_path_, log_path_;
  size_t starts_ = 0;
};

}  // namespace delaybridge::testing
