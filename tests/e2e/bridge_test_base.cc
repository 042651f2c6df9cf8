#include "tests/e2e/bridge_test_base.h"

#include <cstdlib>
#include <fstream>

namespace delaybridge::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

void BridgeTestBase::SetUpBridge(const BridgeTopology& topology, const std::string& extra_yaml,
                                 bool short_session_timeout) {
  Result<std::string> bootstrap = BootstrapFromEnv();
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status().ToString();
  bootstrap_ = *bootstrap;
  topology_ = topology;

  const std::string base = UniqueName("e2e");
  delay_topic_ = base + ".delayed";
  target_topic_ = base + ".delivered";
  alt_topic_ = base + ".other";
  dlq_topic_ = base + ".dlq";
  const Status created = CreateTopics(
      bootstrap_, {{delay_topic_, topology.delay_partitions, topology.delay_topic_configs},
                   {target_topic_, topology.target_partitions},
                   {alt_topic_, topology.alt_partitions, topology.alt_topic_configs},
                   {dlq_topic_, topology.dlq_partitions, topology.dlq_topic_configs}});
  ASSERT_TRUE(created.ok()) << created.ToString();

  work_dir_ = std::filesystem::temp_directory_path() / base;
  std::filesystem::create_directories(work_dir_ / "data");
  group_id_ = base + ".bridge";
  extra_yaml_ = extra_yaml;
  short_session_timeout_ = short_session_timeout;
  config_path_ = (work_dir_ / "config.yaml").string();
  ASSERT_NO_FATAL_FAILURE(WriteConfig(config_path_, (work_dir_ / "data").string(), ""));

  bridge_ = std::make_unique<testing::BridgeProcess>(DELAYBRIDGE_BIN, config_path_,
                                                     (work_dir_ / "bridge.log").string());
  auto producer = TestProducer::Create(bootstrap_);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  producer_ = std::move(producer).value();
  auto collector = TestConsumer::Create(bootstrap_, base + ".collector");
  ASSERT_TRUE(collector.ok()) << collector.status().ToString();
  collector_ = std::move(collector).value();
  const Status assigned =
      collector_->AssignFromBeginning({{target_topic_, topology.target_partitions},
                                       {alt_topic_, topology.alt_partitions},
                                       {dlq_topic_, topology.dlq_partitions}});
  ASSERT_TRUE(assigned.ok()) << assigned.ToString();
}

void BridgeTestBase::WriteConfig(const std::string& path, const std::string& data_dir,
                                 const std::string& instance_yaml) const {
  std::ofstream config(path);
  config << "kafka:\n"
         << "  bootstrap.servers: " << Quoted(bootstrap_) << "\n"
         << (short_session_timeout_ ? "  session.timeout.ms: \"6000\"\n" : "") << "routes:\n"
         << "  " << Quoted(delay_topic_) << ": " << Quoted(target_topic_) << "\n"
         << "allowed_targets: [" << Quoted(target_topic_) << ", " << Quoted(alt_topic_) << "]\n"
         << "dead_letter_topic: " << Quoted(dlq_topic_) << "\n"
         << "group_id: " << Quoted(group_id_) << "\n"
         << "storage:\n"
         << "  dir: " << Quoted(data_dir) << "\n"
         << "  checkpoint_interval_ms: " << kCheckpointIntervalMs << "\n"
         << "wheel:\n"
         << "  tick_ms: 1\n"
         << "  preload_seconds: 5\n"
         << "max_delay: 1h\n"
         << "stats_interval_s: 5\n"
         << "metrics:\n"
         << "  listen: \"127.0.0.1:0\"\n"
         << extra_yaml_ << instance_yaml;
  config.close();
  ASSERT_TRUE(config.good()) << "writing " << path;
}

std::unique_ptr<testing::BridgeProcess> BridgeTestBase::MakeInstance(
    const std::string& name, const std::string& instance_yaml) const {
  const std::string path = (work_dir_ / ("config-" + name + ".yaml")).string();
  WriteConfig(path, (work_dir_ / ("data-" + name)).string(), instance_yaml);
  return std::make_unique<testing::BridgeProcess>(DELAYBRIDGE_BIN, path,
                                                  (work_dir_ / (name + ".log")).string());
}

void BridgeTestBase::TearDown() {
  if (broker_stopped_) {
    const Status restarted = StartBroker();
    EXPECT_TRUE(restarted.ok()) << restarted.ToString();
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
    if (bridge_) {
      const std::string log = bridge_->Log();
      std::cerr << "---- bridge log tail ----\n"
                << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n----\n";
    }
    std::cerr << "kept " << work_dir_ << " for inspection\n";
  } else if (!work_dir_.empty()) {
    std::filesystem::remove_all(work_dir_);
  }
}

void BridgeTestBase::StartBridgeAndWaitReady(seconds timeout,
                                             const std::function<void()>& meanwhile) {
  const Status started = bridge_->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  const std::string tag = std::to_string(++probes_);
  ASSERT_TRUE(producer_->Produce(ProbeRecord(delay_topic_, tag)).ok());
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  bool seen = false;
  const std::string want = "probe=" + tag;
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

void BridgeTestBase::Absorb(std::vector<ConsumedRecord> records) {
  for (ConsumedRecord& record : records) {
    if (const auto id = WorkloadId(record.value)) seen_ids_.insert(*id);
    received_.push_back(std::move(record));
  }
}

void BridgeTestBase::ReceiveUntil(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= milliseconds(0)) break;
    // Short batches so done() is re-evaluated often.
    Absorb(collector_->ConsumeUntil(
        [](const std::vector<ConsumedRecord>& r) { return r.size() >= 5000; },
        std::min(left, milliseconds(200))));
  }
}

void BridgeTestBase::ReceiveFor(milliseconds quiet) { Absorb(collector_->ConsumeFor(quiet)); }

Status BridgeTestBase::KafkaScript(const std::string& command) {
  const char* script = std::getenv("DELAYBRIDGE_KAFKA_SCRIPT");
  if (script == nullptr) {
    return Status::FailedPrecondition("DELAYBRIDGE_KAFKA_SCRIPT is not set (run through ctest)");
  }
  // kafka.sh reads KAFKA_PORT and KAFKA_STATE_DIR from the environment CTest set.
  const std::string line = "bash '" + std::string(script) + "' " + command;
  const int status = std::system(line.c_str());
  if (status != 0) {
    return Status::Unavailable(line + ": wait status " + std::to_string(status));
  }
  return Status::Ok();
}

Status BridgeTestBase::StopBroker() {
  broker_stopped_ = true;
  return KafkaScript("stop");
}

Status BridgeTestBase::StartBroker() {
  Status started = KafkaScript("start");
  if (started.ok()) broker_stopped_ = false;
  return started;
}

std::map<std::string, int32_t> BridgeTestBase::TargetPartitions() const {
  return {{target_topic_, topology_.target_partitions}, {alt_topic_, topology_.alt_partitions}};
}

WorkloadSpec BridgeTestBase::Spec(uint64_t seed, int64_t max_delay_ms) const {
  WorkloadSpec spec;
  spec.delay_topic = delay_topic_;
  spec.default_target = target_topic_;
  spec.alt_target = alt_topic_;
  spec.max_delay_ms = max_delay_ms;
  spec.seed = seed;
  return spec;
}

void ExpectNoneLostEarlyOrAltered(const DeliveryReport& report) {
  EXPECT_EQ(report.missing(), 0u) << report.ToString();
  EXPECT_EQ(report.early, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_topic, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_partition, 0u) << report.ToString();
  EXPECT_EQ(report.wrong_content, 0u) << report.ToString();
  EXPECT_EQ(report.unknown, 0u) << report.ToString();
}

}  // namespace delaybridge::e2e
