#include "tests/plugin/bridge_test_env.h"

#include <unistd.h>

#include <fstream>
#include <thread>

namespace delaybridge::testing {

void BridgeTestEnv::Prepare(const BridgeTestOptions& options) {
  options_ = options;
  dir_ = std::make_unique<TempDir>("bridge_test");
  auto cluster = TestCluster::Create();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  cluster_ = std::move(cluster).value();

  // Unique names, so tests can share an external broker.
  const std::string base =
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "." +
      std::to_string(::getpid());
  delay_topic_ = base + ".delayed";
  target_topic_ = base + ".delivered";
  alt_topic_ = base + ".orders";
  dlq_topic_ = base + ".dlq";
  ASSERT_TRUE(cluster_->CreateTopic(delay_topic_, options.delay_partitions).ok());
  ASSERT_TRUE(cluster_->CreateTopic(target_topic_, options.target_partitions).ok());
  ASSERT_TRUE(cluster_->CreateTopic(alt_topic_, options.target_partitions).ok());
  ASSERT_TRUE(cluster_->CreateTopic(dlq_topic_, 2).ok());

  config_path_ = dir_->File("config.yaml");
  log_path_ = dir_->File("bridge.log");
  ASSERT_NO_FATAL_FAILURE(WriteConfig(
      config_path_, options.storage_dir.empty() ? dir_->File("data") : options.storage_dir));
  bridge_ = std::make_unique<BridgeProcess>(DELAYBRIDGE_BINARY, config_path_, log_path_);
  auto producer = TestProducer::Create(cluster_->bootstrap());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  producer_ = std::move(producer).value();
}

void BridgeTestEnv::WriteConfig(const std::string& path, const std::string& storage_dir) const {
  const std::string base =
      delay_topic_.substr(0, delay_topic_.size() - std::string(".delayed").size());
  std::ofstream config(path);
  config << "kafka:\n"
         << "  bootstrap.servers: \"" << cluster_->bootstrap() << "\"\n"
         << "  session.timeout.ms: 6000\n"
         << "  heartbeat.interval.ms: 500\n"
         << (options_.kafka_stats ? "  statistics.interval.ms: 100\n" : "") << "routes:\n"
         << "  \"" << delay_topic_ << "\": \"" << target_topic_ << "\"\n"
         << "allowed_targets: [\"" << target_topic_ << "\", \"" << alt_topic_ << "\"]\n"
         << "dead_letter_topic: \"" << dlq_topic_ << "\"\n"
         << "group_id: \"" << base << ".bridge\"\n"
         << "storage:\n"
         << "  dir: \"" << storage_dir << "\"\n"
         << "  checkpoint_interval_ms: 100\n"
         << "wheel:\n"
         << "  tick_ms: 1\n"
         << "  preload_seconds: 5\n"
         << "  max_preloaded_records: " << options_.max_preloaded_records << "\n"
         << "max_delay: " << options_.max_delay << "\n"
         << "max_record_bytes: " << options_.max_record_bytes << "\n"
         << "stats_interval_s: 5\n"
         << "metrics:\n"
         << "  listen: \"127.0.0.1:0\"\n";
  if (options_.kafka_stats) config << "kafka_stats_file: \"" << kafka_stats_path() << "\"\n";
  config.close();
  ASSERT_TRUE(config.good()) << "writing " << path;
}

std::unique_ptr<BridgeProcess> BridgeTestEnv::MakeInstance(const std::string& name) const {
  const std::string config_path = dir_->File("config-" + name + ".yaml");
  WriteConfig(config_path, dir_->File("data-" + name));
  return std::make_unique<BridgeProcess>(DELAYBRIDGE_BINARY, config_path,
                                         dir_->File(name + ".log"));
}

uint16_t BridgeTestEnv::MetricsPort() const {
  const std::string marker = "serving /metrics, /healthz and /readyz on http://127.0.0.1:";
  if (!bridge_->WaitForLog(marker, std::chrono::seconds(30))) {
    ADD_FAILURE() << "the bridge did not log its metrics port\n" << LogTail();
    return 0;
  }
  const std::string log = bridge_->Log();
  return static_cast<uint16_t>(std::stoi(log.substr(log.rfind(marker) + marker.size())));
}

void BridgeTestEnv::TearDown() {
  if (HasFailure() && bridge_) std::cerr << "---- bridge log ----\n" << LogTail() << "\n----\n";
  if (bridge_) bridge_->Kill();
}

void BridgeTestEnv::StartBridge() {
  ASSERT_TRUE(bridge_->Start().ok());
  ++starts_;
  // Every partition is logged as "assigned <topic>-<p>"; wait for this run's full set.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const size_t wanted = starts_ * static_cast<size_t>(options_.delay_partitions);
  while (bridge_->CountInLog("INFO  assigned " + delay_topic_) < wanted) {
    ASSERT_TRUE(bridge_->running()) << "bridge exited during start-up\n" << LogTail();
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "partitions not assigned in time";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void BridgeTestEnv::StopBridge() {
  auto code = bridge_->Terminate(std::chrono::seconds(60));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0);
}

std::string BridgeTestEnv::LogTail() const {
  const std::string log = bridge_->Log();
  constexpr size_t kTail = 6000;
  return log.size() <= kTail ? log : log.substr(log.size() - kTail);
}

int64_t BridgeTestEnv::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<TestRecord> BridgeTestEnv::CollectDeliveries(const DelayWorkload& workload,
                                                         size_t records,
                                                         std::chrono::milliseconds timeout,
                                                         std::chrono::milliseconds linger,
                                                         bool* all) {
  std::vector<TestRecord> delivered;
  auto reader = TestConsumer::Create(
      cluster_->bootstrap(),
      {{target_topic_, options_.target_partitions}, {alt_topic_, options_.target_partitions}});
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  *all = false;
  if (!reader.ok()) return delivered;
  *all = (*reader)->CollectUntil(
      &delivered,
      [&](const std::vector<TestRecord>& got) {
        return workload.DistinctDelivered(got) == records;
      },
      timeout);
  for (auto& r : (*reader)->Poll(linger)) delivered.push_back(std::move(r));
  return delivered;
}

}  // namespace delaybridge::testing
