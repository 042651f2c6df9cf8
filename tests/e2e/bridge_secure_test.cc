// The bridge against a broker that lets clients in only over TLS with SCRAM-SHA-512 credentials,
// the way secured production clusters run. The `kafka` fixture broker has no such listener, so
// this suite starts a broker of its own (scripts/kafka.sh up --sasl-ssl: a throwaway CA, a broker
// certificate for 127.0.0.1, a SCRAM user with a random password) on ports of its own.
//
// The bridge gets security.protocol, sasl.* and ssl.ca.location under `kafka:` like any other
// librdkafka property; its password comes from ${ENV} substitution or a sasl.password_file key,
// never from the YAML itself. The test's own producer and consumer speak SASL_SSL too; only
// topic creation uses the broker's PLAINTEXT listener (the admin side is not under test).
//
// Checks: 200 records with delays of 1-3 s delivered on time, once, intact; the password nowhere
// in the bridge's log, its librdkafka statistics file or its /metrics page; the password read
// from a file works the same; a wrong password is refused (--check exits 3 within its 10 s
// bound instead of hanging, and the running bridge logs the SASL authentication error).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/bridge_fixture.h"  // ExpectNoneLostEarlyOrAltered, the clients
#include "tests/support/http_get.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The suite's broker (CMake derives them from DELAYBRIDGE_TEST_KAFKA_PORT, away from the fixture
// broker's ports): PLAINTEXT for the admin client, the next port for the KRaft controller, and
// the one after for SASL_SSL.
constexpr int kPlaintextPort = DELAYBRIDGE_SECURE_KAFKA_PORT;
constexpr int kControllerPort = kPlaintextPort + 1;
constexpr int kSaslSslPort = kPlaintextPort + 2;
// Kafka 4.x rejects the SCRAM proof of librdkafka before 2.6.1 (confluentinc/librdkafka#4895: the
// client nonce is sent twice in client-final-message, and Kafka 4 compares the nonce strictly).
// This machine's librdkafka is 2.0.2, so SCRAM against the pinned 4.1.1 always fails with
// "invalid credentials"; 3.9.1 is the newest release it authenticates against.
constexpr const char* kBrokerVersion = "3.9.1";
// The environment variable the bridge's YAML names: `sasl.password: "${...}"`.
constexpr const char* kPasswordEnv = "DELAYBRIDGE_TEST_SASL_PASSWORD";

constexpr int kRecords = 200;
constexpr int64_t kMinDelayMs = 1'000;
constexpr int64_t kMaxDelayMs = 3'000;
// "On time": a delivered record's timestamp at most this long after its due time. The bridge
// typically delivers within tens of ms; the bound leaves room for a sanitizer build on two
// shared cores with two JVM brokers, while a bridge stuck reconnecting or re-authenticating
// (seconds per attempt) would exceed it.
constexpr int64_t kMaxLatenessMs = 10'000;

std::string Quoted(const std::string& text) { return "\"" + text + "\""; }

std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// scripts/kafka.sh writes the SASL_SSL client settings as librdkafka `name=value` lines.
std::map<std::string, std::string> ReadProperties(const std::filesystem::path& path) {
  std::map<std::string, std::string> properties;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    properties[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return properties;
}

std::string LogTail(const std::string& log) {
  return log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
}

class BridgeSecureTest : public ::testing::Test {
 protected:
  // One broker per test process (ctest runs every test case in a process of its own).
  static void SetUpTestSuite() {
    broker_error_.clear();
    // A run killed before TearDownTestSuite (a ctest timeout) leaves its broker running, and `up`
    // refuses to start over it. Usually there is nothing to clear; real problems show in `up`.
    KafkaScript("down");
    const Status up = KafkaScript("up");
    if (!up.ok()) {
      broker_error_ = up.ToString();
      return;
    }
    client_ = ReadProperties(StateDir() / "sasl-ssl" / "client.properties");
    for (const char* key : {"bootstrap.servers", "security.protocol", "sasl.mechanisms",
                            "sasl.username", "sasl.password", "ssl.ca.location"}) {
      if (client_[key].empty()) broker_error_ = std::string("client.properties lacks ") + key;
    }
  }

  static void TearDownTestSuite() {
    const Status down = KafkaScript("down");
    if (!down.ok()) std::cerr << down.ToString() << "\n";
  }

  static std::filesystem::path StateDir() { return DELAYBRIDGE_SECURE_KAFKA_DIR; }

  static Status KafkaScript(const std::string& command) {
    const char* script = std::getenv("DELAYBRIDGE_KAFKA_SCRIPT");
    if (script == nullptr) {
      return Status::FailedPrecondition("DELAYBRIDGE_KAFKA_SCRIPT is not set (run through ctest)");
    }
    // Every setting on the command line: CTest's environment carries the fixture broker's
    // KAFKA_PORT, KAFKA_STATE_DIR and KAFKA_VERSION, which must not apply to this one.
    const std::string line = "bash '" + std::string(script) + "' --port " +
                             std::to_string(kPlaintextPort) + " --controller-port " +
                             std::to_string(kControllerPort) + " --dir '" + StateDir().string() +
                             "' --version " + kBrokerVersion + " --sasl-ssl " +
                             std::to_string(kSaslSslPort) + " " + command;
    const int status = std::system(line.c_str());
    if (status != 0) {
      return Status::Unavailable(line + ": wait status " + std::to_string(status));
    }
    return Status::Ok();
  }

  void SetUp() override {
    ASSERT_TRUE(broker_error_.empty()) << "SASL_SSL broker: " << broker_error_;
    password_ = client_.at("sasl.password");
    const std::string base = UniqueName("secure");
    delay_topic_ = base + ".delayed";
    target_topic_ = base + ".delivered";
    dlq_topic_ = base + ".dlq";
    group_id_ = base + ".bridge";
    // The admin client on the PLAINTEXT listener: creating topics is not what is tested.
    const Status created =
        CreateTopics("127.0.0.1:" + std::to_string(kPlaintextPort),
                     {{delay_topic_, 4}, {target_topic_, kTargetPartitions}, {dlq_topic_, 1}});
    ASSERT_TRUE(created.ok()) << created.ToString();
    dir_ = std::make_unique<TempDir>("bridge_secure_test");
    work_dir_ = dir_->path();

    auto producer = TestProducer::Create(client_.at("bootstrap.servers"), client_);
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    producer_ = std::move(producer).value();
    auto collector =
        TestConsumer::Create(client_.at("bootstrap.servers"), base + ".collector", client_);
    ASSERT_TRUE(collector.ok()) << collector.status().ToString();
    collector_ = std::move(collector).value();
    const Status assigned = collector_->AssignFromBeginning({{target_topic_, kTargetPartitions}});
    ASSERT_TRUE(assigned.ok()) << assigned.ToString();
  }

  void TearDown() override {
    if (bridge_ && bridge_->running()) {
      Result<int> exit_code = bridge_->Terminate(seconds(60));
      EXPECT_TRUE(exit_code.ok()) << exit_code.status().ToString();
      if (exit_code.ok()) {
        EXPECT_EQ(*exit_code, 0) << "exit code after SIGTERM";
      }
    }
    collector_.reset();
    producer_.reset();
    if (HasFailure()) {
      if (bridge_) std::cerr << "---- bridge log tail ----\n" << LogTail(bridge_->Log()) << "\n";
      if (dir_) {
        dir_->Keep();
        std::cerr << "kept " << work_dir_ << " for inspection\n";
      }
    }
  }

  // A bridge config for the SASL_SSL listener; password_yaml is the line (or lines) that give
  // librdkafka the password, indented under `kafka:`.
  std::string WriteConfig(const std::string& name, const std::string& password_yaml,
                          bool kafka_stats) {
    const std::string path = (work_dir_ / (name + ".yaml")).string();
    std::ofstream config(path);
    config << "kafka:\n"
           << "  bootstrap.servers: " << Quoted(client_.at("bootstrap.servers")) << "\n"
           << "  security.protocol: SASL_SSL\n"
           << "  sasl.mechanisms: SCRAM-SHA-512\n"
           << "  sasl.username: " << Quoted(client_.at("sasl.username")) << "\n"
           << password_yaml << "  ssl.ca.location: " << Quoted(client_.at("ssl.ca.location"))
           << "\n"
           << "  session.timeout.ms: \"6000\"\n"
           << (kafka_stats ? "  statistics.interval.ms: \"1000\"\n" : "") << "routes:\n"
           << "  " << Quoted(delay_topic_) << ": " << Quoted(target_topic_) << "\n"
           << "dead_letter_topic: " << Quoted(dlq_topic_) << "\n"
           << "group_id: " << Quoted(group_id_) << "\n"
           << "storage:\n"
           << "  dir: " << Quoted((work_dir_ / ("data-" + name)).string())
           << "\n"
           // Kafka's default 7-day retention covers 1 h + the 1 d margin, so the bridge starts.
           << "max_delay: 1h\n"
           << "stats_interval_s: 1\n"
           << "metrics:\n"
           << "  listen: \"127.0.0.1:0\"\n";
    if (kafka_stats) {
      config << "kafka_stats_file: " << Quoted((work_dir_ / (name + "-stats.jsonl")).string())
             << "\n";
    }
    config.close();
    EXPECT_TRUE(config.good()) << "writing " << path;
    return path;
  }

  void MakeBridge(const std::string& config_path, const std::string& name) {
    bridge_ = std::make_unique<BridgeProcess>(DELAYBRIDGE_BINARY, config_path,
                                              (work_dir_ / (name + ".log")).string());
  }

  // Starts the bridge, then produces a probe record over SASL_SSL and waits until the bridge
  // delivers it: from then on it has joined its group and delivers in real time.
  void StartBridgeAndWaitReady() {
    const Status started = bridge_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    ASSERT_TRUE(producer_->Produce(ProbeRecord(delay_topic_, "ready")).ok());
    const Status flushed = producer_->Flush(seconds(30));
    ASSERT_TRUE(flushed.ok()) << flushed.ToString();
    bool seen = false;
    const auto deadline = std::chrono::steady_clock::now() + seconds(120);
    while (!seen && bridge_->running() && std::chrono::steady_clock::now() < deadline) {
      for (const TestRecord& record : Receive(milliseconds(200))) {
        seen = seen || record.value == "probe=ready";
      }
    }
    ASSERT_TRUE(bridge_->running()) << "bridge exited during start-up";
    ASSERT_TRUE(seen) << "probe not delivered within 120 s";
  }

  std::vector<TestRecord> Receive(milliseconds timeout) {
    std::vector<TestRecord> records = collector_->ConsumeFor(timeout);
    received_.insert(received_.end(), records.begin(), records.end());
    return records;
  }

  // Produces `count` records due 1-3 s later (both header styles) and waits for them; returns
  // the delivery report of everything received.
  DeliveryReport DeliverWorkload(int count, uint64_t seed) {
    WorkloadSpec spec;
    spec.delay_topic = delay_topic_;
    spec.default_target = target_topic_;
    spec.max_delay_ms = kMaxDelayMs;
    spec.seed = seed;
    DelayWorkload workload(spec);
    std::mt19937_64 delays(seed);
    std::uniform_int_distribution<int64_t> delay(kMinDelayMs, kMaxDelayMs);
    for (int i = 0; i < count; ++i) {
      const Status produced = producer_->Produce(workload.NextWithDelay(delay(delays), i % 2 == 0));
      EXPECT_TRUE(produced.ok()) << produced.ToString();
    }
    const Status flushed = producer_->Flush(seconds(60));
    EXPECT_TRUE(flushed.ok()) << flushed.ToString();

    const auto deadline =
        std::chrono::steady_clock::now() + milliseconds(kMaxDelayMs) + seconds(60);
    auto distinct = [&] {
      return workload.CheckDeliveries(received_, {{target_topic_, kTargetPartitions}}).delivered;
    };
    while (distinct() < workload.size() && bridge_->running() &&
           std::chrono::steady_clock::now() < deadline) {
      Receive(milliseconds(200));
    }
    // A second copy would most likely arrive right behind the first.
    Receive(seconds(2));
    EXPECT_TRUE(bridge_->running()) << "bridge died";
    return workload.CheckDeliveries(received_, {{target_topic_, kTargetPartitions}});
  }

  // The metrics port the bridge logged at start.
  uint16_t MetricsPort() const {
    const std::string marker = "serving /metrics, /healthz and /readyz on http://127.0.0.1:";
    if (!bridge_->WaitForLog(marker, seconds(30))) return 0;
    const std::string log = bridge_->Log();
    return static_cast<uint16_t>(std::stoi(log.substr(log.rfind(marker) + marker.size())));
  }

  static constexpr int kTargetPartitions = 4;
  static inline std::string broker_error_;
  static inline std::map<std::string, std::string> client_;  // SASL_SSL client properties

  std::string password_;
  std::string delay_topic_;
  std::string target_topic_;
  std::string dlq_topic_;
  std::string group_id_;
  std::unique_ptr<TempDir> dir_;
  std::filesystem::path work_dir_;  // dir_'s path
  std::unique_ptr<TestProducer> producer_;
  std::unique_ptr<TestConsumer> collector_;
  std::unique_ptr<BridgeProcess> bridge_;
  std::vector<TestRecord> received_;
};

void ExpectAllDeliveredOnceOnTime(const DeliveryReport& report, size_t expected) {
  std::cout << "delivery report: " << report.ToString() << "\n";
  EXPECT_EQ(report.expected, expected);
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u);
  EXPECT_LE(report.produce_lateness.max_ms, kMaxLatenessMs);
}

TEST_F(BridgeSecureTest, SaslSslWithPasswordFromEnvironmentDeliversAndLeaksNothing) {
  const std::string config = WriteConfig(
      "env", "  sasl.password: " + Quoted(std::string("${") + kPasswordEnv + "}") + "\n",
      /*kafka_stats=*/true);
  ASSERT_EQ(ReadWholeFile(config).find(password_), std::string::npos);
  MakeBridge(config, "env");
  bridge_->set_environment({std::string(kPasswordEnv) + "=" + password_});
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  const DeliveryReport report = DeliverWorkload(kRecords, 20261125);
  ExpectAllDeliveredOnceOnTime(report, kRecords);
  RecordProperty("lateness_max_ms", std::to_string(report.produce_lateness.max_ms));

  // What the bridge shows of itself while running: the /metrics page and librdkafka's
  // statistics (written every second; the run above took several).
  const uint16_t port = MetricsPort();
  ASSERT_NE(port, 0) << "the bridge did not log its metrics port";
  auto metrics = HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("delaybridge_"), std::string::npos);
  EXPECT_EQ(metrics->body.find(password_), std::string::npos) << "password in /metrics";
  const std::string stats = ReadWholeFile(work_dir_ / "env-stats.jsonl");
  EXPECT_NE(stats.find("\"type\": \"producer\""), std::string::npos)
      << "no librdkafka statistics written: " << stats.substr(0, 200);
  EXPECT_NE(stats.find("sasl_ssl://127.0.0.1:" + std::to_string(kSaslSslPort)), std::string::npos);
  EXPECT_EQ(stats.find(password_), std::string::npos) << "password in kafka_stats_file";

  // After a clean stop the log holds everything the bridge ever printed: the start-up line
  // describing the config (the password masked), the stats lines, the shutdown.
  Result<int> exit_code = bridge_->Terminate(seconds(60));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  EXPECT_EQ(*exit_code, 0);
  const std::string log = bridge_->Log();
  EXPECT_NE(log.find("sasl.password: ***"), std::string::npos);
  EXPECT_NE(log.find("INFO  stats: "), std::string::npos);
  EXPECT_EQ(log.find(password_), std::string::npos) << "password in the bridge's log";
}

TEST_F(BridgeSecureTest, PasswordFromFileWorksTheSame) {
  // scripts/kafka.sh writes the password newline-terminated, as `echo` or an editor would; the
  // bridge drops that one newline.
  const std::filesystem::path password_file = StateDir() / "sasl-ssl" / "password";
  ASSERT_EQ(ReadWholeFile(password_file), password_ + "\n");
  const std::string config =
      WriteConfig("file", "  sasl.password_file: " + Quoted(password_file.string()) + "\n",
                  /*kafka_stats=*/false);

  const CommandResult check =
      RunBridgeCommand(DELAYBRIDGE_BINARY, {"--config", config, "--check"}, seconds(60));
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("check passed"), std::string::npos) << check.output;
  EXPECT_EQ(check.output.find(password_), std::string::npos) << "password in --check output";

  MakeBridge(config, "file");
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());
  ExpectAllDeliveredOnceOnTime(DeliverWorkload(50, 7), 50);
  EXPECT_EQ(bridge_->Log().find(password_), std::string::npos) << "password in the bridge's log";
}

TEST_F(BridgeSecureTest, WrongPasswordIsRefusedNotWaitedOnSilently) {
  // A wrong password of the same shape as the real one.
  std::string wrong = password_;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  const std::filesystem::path wrong_file = work_dir_ / "wrong-password";
  std::ofstream(wrong_file) << wrong << "\n";
  const std::string config =
      WriteConfig("wrong", "  sasl.password_file: " + Quoted(wrong_file.string()) + "\n",
                  /*kafka_stats=*/false);

  // --check: the broker refuses every connection, so no broker answers within the check's 10 s
  // and it exits 3 (docs/bridge.md) instead of waiting on, naming the authentication failure.
  const auto check_start = std::chrono::steady_clock::now();
  const CommandResult check =
      RunBridgeCommand(DELAYBRIDGE_BINARY, {"--config", config, "--check"}, seconds(60));
  const auto check_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - check_start);
  std::cout << "--check with a wrong password: exit " << check.exit_code << " after "
            << check_ms.count() << " ms\n";
  EXPECT_EQ(check.exit_code, 3) << check.output;
  EXPECT_LT(check_ms, seconds(30));
  EXPECT_NE(check.output.find("ERROR check failed: "), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("the client reported Local: Authentication failure"),
            std::string::npos)
      << check.output;
  EXPECT_EQ(check.output.find(wrong), std::string::npos) << "password in --check output";

  // The running bridge names the failure at once, at ERROR.
  MakeBridge(config, "wrong");
  ASSERT_TRUE(bridge_->Start().ok());
  EXPECT_TRUE(bridge_->WaitForLog("SASL authentication error: Authentication failed", seconds(60)))
      << LogTail(bridge_->Log());
  EXPECT_TRUE(bridge_->WaitForLog("kafka error Local: Authentication failure", seconds(10)));
  const std::string log = bridge_->Log();
  std::istringstream lines(log);
  bool error_line = false;
  for (std::string line; std::getline(lines, line);) {
    error_line = error_line || (line.find(" ERROR ") != std::string::npos &&
                                line.find("SASL authentication error") != std::string::npos);
  }
  EXPECT_TRUE(error_line) << "no ERROR line names the SASL authentication error";
  EXPECT_EQ(log.find(wrong), std::string::npos) << "password in the bridge's log";
  EXPECT_EQ(log.find(password_), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::testing
