#include "tests/support/bridge_fixture.h"

#include <fstream>
#include <iostream>
#include <thread>

#include "tests/support/topic_admin.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr size_t kLogTailBytes = 6000;

std::string Quoted(const std::string& text) {
  std::string quoted = "\"";
  quoted += text;
  quoted += "\"";
  return quoted;
}

std::string Tail(const std::string& log) {
  return log.size() <= kLogTailBytes ? log : log.substr(log.size() - kLogTailBytes);
}

}  // namespace

void BridgeFixture::SetUpBridge(const BridgeTestOptions& options) {
  options_ = options;
  auto cluster = TestCluster::Create(cluster_kind_);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  cluster_ = std::move(cluster).value();

  // Unique names, so tests can share a broker, also across runs.
  const std::string base =
      UniqueName(::testing::UnitTest::GetInstance()->current_test_info()->name());
  delay_topic_ = base + ".delayed";
  target_topic_ = base + ".delivered";
  alt_topic_ = base + ".other";
  dlq_topic_ = base + ".dlq";
  group_id_ = base + ".bridge";
  const Status created =
      cluster_->CreateTopics({{delay_topic_, options.delay_partitions, options.delay_topic_configs},
                              {target_topic_, options.target_partitions},
                              {alt_topic_, options.alt_partitions, options.alt_topic_configs},
                              {dlq_topic_, options.dlq_partitions, options.dlq_topic_configs}});
  ASSERT_TRUE(created.ok()) << created.ToString();

  dir_ = std::make_unique<TempDir>("bridge_test");
  config_path_ = dir_->File("config.yaml");
  ASSERT_NO_FATAL_FAILURE(WriteConfig(
      config_path_, options.storage_dir.empty() ? dir_->File("data") : options.storage_dir, ""));
  bridge_ =
      std::make_unique<BridgeProcess>(DELAYBRIDGE_BINARY, config_path_, dir_->File("bridge.log"));

  auto producer = TestProducer::Create(cluster_->bootstrap());
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  producer_ = std::move(producer).value();
  auto collector = TestConsumer::Create(cluster_->bootstrap(), base + ".collector");
  ASSERT_TRUE(collector.ok()) << collector.status().ToString();
  collector_ = std::move(collector).value();
  const Status assigned =
      collector_->AssignFromBeginning({{target_topic_, options.target_partitions},
                                       {alt_topic_, options.alt_partitions},
                                       {dlq_topic_, options.dlq_partitions}});
  ASSERT_TRUE(assigned.ok()) << assigned.ToString();
}

void BridgeFixture::WriteConfig(const std::string& path, const std::string& storage_dir,
                                const std::string& instance_yaml) const {
  std::ofstream config(path);
  config << "kafka:\n"
         << "  bootstrap.servers: " << Quoted(cluster_->bootstrap()) << "\n";
  if (options_.short_session_timeout) {
    config << "  session.timeout.ms: 6000\n"
           << "  heartbeat.interval.ms: 500\n";
  }
  if (options_.kafka_stats) config << "  statistics.interval.ms: 100\n";
  config << "routes:\n"
         << "  " << Quoted(delay_topic_) << ": " << Quoted(target_topic_) << "\n"
         << "allowed_targets: [" << Quoted(target_topic_) << ", " << Quoted(alt_topic_) << "]\n"
         << "dead_letter_topic: " << Quoted(dlq_topic_) << "\n"
         << "group_id: " << Quoted(group_id_) << "\n"
         << "storage:\n"
         << "  dir: " << Quoted(storage_dir) << "\n"
         << "  checkpoint_interval_ms: " << kCheckpointIntervalMs << "\n"
         << "wheel:\n"
         << "  tick_ms: 1\n"
         << "  preload_seconds: 5\n";
  if (options_.max_preloaded_records) {
    config << "  max_preloaded_records: " << *options_.max_preloaded_records << "\n";
  }
  config << "max_delay: 1h\n";
  if (options_.max_record_bytes) {
    config << "max_record_bytes: " << *options_.max_record_bytes << "\n";
  }
  config << "stats_interval_s: 5\n"
         << "metrics:\n"
         << "  listen: \"127.0.0.1:0\"\n";
  if (options_.kafka_stats) config << "kafka_stats_file: " << Quoted(kafka_stats_path()) << "\n";
  config << options_.extra_yaml << instance_yaml;
  config.close();
  ASSERT_TRUE(config.good()) << "writing " << path;
}

void BridgeFixture::TearDown() {
  if (cluster_ && cluster_->broker_down()) {
    // A test that took the broker away failed before bringing it back: later tests need it.
    const Status restored = cluster_->SetBrokerDown(false);
    EXPECT_TRUE(restored.ok()) << restored.ToString();
  }
  for (auto& [name, instance] : instances_) {
    if (HasFailure()) {
      std::cerr << "---- instance " << name << " log tail ----\n" << Tail(instance->Log()) << "\n";
    }
    instance->Kill();
  }
  if (bridge_ && bridge_->running()) {
    // A clean stop at the end is part of the contract: SIGTERM exits 0.
    Result<int> exit_code = bridge_->Terminate(seconds(60));
    EXPECT_TRUE(exit_code.ok()) << exit_code.status().ToString();
    if (exit_code.ok()) {
      EXPECT_EQ(*exit_code, 0) << "exit code after SIGTERM";
    }
  }
  if (HasFailure()) {
    if (bridge_) std::cerr << "---- bridge log tail ----\n" << LogTail() << "\n----\n";
    if (dir_) {
      dir_->Keep();
      std::cerr << "kept " << dir_->path() << " for inspection\n";
    }
  }
}

void BridgeFixture::StartBridge(const std::function<void()>& meanwhile) {
  const Status started = bridge_->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  ++starts_;
  // Every partition is logged as "assigned <topic>-<p>"; wait for this run's full set.
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  const size_t wanted = starts_ * static_cast<size_t>(options_.delay_partitions);
  while (bridge_->CountInLog("INFO  assigned " + delay_topic_) < wanted) {
    ASSERT_TRUE(bridge_->running()) << "bridge exited during start-up\n" << LogTail();
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "partitions not assigned in time";
    if (meanwhile) {
      meanwhile();
    } else {
      std::this_thread::sleep_for(milliseconds(100));
    }
  }
}

void BridgeFixture::StartBridgeAndWaitReady(seconds timeout,
                                            const std::function<void()>& meanwhile) {
  const Status started = bridge_->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  ++starts_;
  const std::string tag = std::to_string(++probes_);
  ASSERT_TRUE(producer_->Produce(ProbeRecord(delay_topic_, tag)).ok());
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  const std::optional<std::string> want = ProbeRecord(delay_topic_, tag).value;
  bool seen = false;
  ReceiveUntil(
      [&] {
        if (meanwhile) meanwhile();
        for (auto it = received_.rbegin(); it != received_.rend() && !seen; ++it) {
          seen = it->value == want;
        }
        return seen || !bridge_->running();
      },
      timeout);
  ASSERT_TRUE(bridge_->running()) << "bridge exited during start-up";
  ASSERT_TRUE(seen) << "probe " << tag << " not delivered within " << timeout.count() << " s";
}

void BridgeFixture::StopBridge() {
  Result<int> code = bridge_->Terminate(seconds(60));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0) << "exit code after SIGTERM";
}

std::unique_ptr<BridgeProcess> BridgeFixture::MakeInstance(const std::string& name,
                                                           const std::string& instance_yaml) const {
  const std::string path = dir_->File("config-" + name + ".yaml");
  WriteConfig(path, dir_->File("data-" + name), instance_yaml);
  return std::make_unique<BridgeProcess>(DELAYBRIDGE_BINARY, path, dir_->File(name + ".log"));
}

BridgeProcess& BridgeFixture::StartInstance(const std::string& name,
                                            const std::string& instance_yaml) {
  std::unique_ptr<BridgeProcess>& instance = instances_[name];
  if (!instance) instance = MakeInstance(name, instance_yaml);
  const Status started = instance->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
  return *instance;
}

void BridgeFixture::StopInstance(const std::string& name) {
  Result<int> code = instances_.at(name)->Terminate(seconds(60));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0) << "instance " << name << " exit code after SIGTERM";
}

std::string BridgeFixture::LogTail() const { return Tail(bridge_->Log()); }

uint16_t BridgeFixture::MetricsPort() const {
  const std::string marker = "serving /metrics, /healthz and /readyz on http://127.0.0.1:";
  if (!bridge_->WaitForLog(marker, seconds(30))) {
    ADD_FAILURE() << "the bridge did not log its metrics port\n" << LogTail();
    return 0;
  }
  const std::string log = bridge_->Log();
  return static_cast<uint16_t>(std::stoi(log.substr(log.rfind(marker) + marker.size())));
}

void BridgeFixture::Absorb(std::vector<TestRecord> records) {
  for (TestRecord& record : records) {
    if (const std::optional<int64_t> id = WorkloadId(record)) seen_ids_.insert(*id);
    received_.push_back(std::move(record));
  }
}

void BridgeFixture::ReceiveUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= milliseconds(0)) break;
    // Short batches so done() is re-evaluated often.
    Absorb(
        collector_->ConsumeUntil([](const std::vector<TestRecord>& r) { return r.size() >= 5000; },
                                 std::min(left, milliseconds(200))));
  }
}

void BridgeFixture::ProduceWorkload(DelayWorkload& workload, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Status produced = producer_->Produce(workload.Next());
    ASSERT_TRUE(produced.ok()) << produced.ToString();
  }
  const Status flushed = producer_->Flush(std::chrono::seconds(30));
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
}

void BridgeFixture::ReceiveFor(milliseconds quiet) { Absorb(collector_->ConsumeFor(quiet)); }

bool BridgeFixture::ReceiveWorkload(const DelayWorkload& workload, milliseconds timeout,
                                    milliseconds linger) {
  ReceiveUntil([&] { return DistinctIdsReceived() == workload.size(); }, timeout);
  const bool all = DistinctIdsReceived() == workload.size();
  ReceiveFor(linger);
  return all;
}

std::map<std::string, int32_t> BridgeFixture::TargetPartitions() const {
  return {{target_topic_, options_.target_partitions}, {alt_topic_, options_.alt_partitions}};
}

WorkloadSpec BridgeFixture::Spec(uint64_t seed, int64_t max_delay_ms, int64_t min_delay_ms) const {
  return {.delay_topic = delay_topic_,
          .default_target = target_topic_,
          .alt_target = alt_topic_,
          .max_delay_ms = max_delay_ms,
          .min_delay_ms = min_delay_ms,
          .seed = seed};
}

void ExpectNoneLostEarlyOrAltered(const DeliveryReport& report) {
  EXPECT_EQ(report.missing(), 0u) << report.ToString();
  EXPECT_EQ(report.early, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_topic, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_partition, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_content, 0u) << report.ToString();
  EXPECT_EQ(report.unknown, 0u) << report.ToString();
  EXPECT_EQ(report.delivered_though_cancelled, 0u) << report.ToString();
}

void ExpectDuplicatesOnlyAround(const DeliveryReport& report, int64_t kill_ms, int64_t window_ms) {
  for (const auto& [id, copies] : report.duplicated) {
    int64_t earliest_ms = copies.front().timestamp_ms;
    for (const TestRecord& copy : copies) earliest_ms = std::min(earliest_ms, copy.timestamp_ms);
    EXPECT_LE(earliest_ms, kill_ms) << "id " << id << " delivered twice after the crash";
    EXPECT_GE(earliest_ms, kill_ms - window_ms)
        << "id " << id << " first delivered " << kill_ms - earliest_ms << " ms before the crash";
  }
}

}  // namespace delaybridge::testing
