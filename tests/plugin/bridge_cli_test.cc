// The delaybridge command line: --help, --version, exit codes, configuration errors reported
// with the key's path, and --check against a reachable and an unreachable broker.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/plugin/json_log_line.h"
#include "tests/support/bridge_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

CommandResult RunBridge(const std::vector<std::string>& args) {
  return RunBridgeCommand(DELAYBRIDGE_BINARY, args, seconds(60));
}

std::string WriteConfig(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.File(name);
  std::ofstream(path) << text;
  return path;
}

// storage_dir is never written by runs that stop at a configuration error.
std::string Config(const std::string& bootstrap, const std::string& extra = "",
                   const std::string& storage_dir = "./unused") {
  return "kafka:\n  bootstrap.servers: \"" + bootstrap +
         "\"\nroutes:\n  delayed: delivered\nallowed_targets: [delivered]\n"
         "dead_letter_topic: delayed.dlq\nmetrics:\n  listen: \"127.0.0.1:0\"\nstorage:\n  dir: " +
         storage_dir + "\n" + extra;
}

TEST(BridgeCliTest, HelpVersionAndUsageErrors) {
  CommandResult help = RunBridge({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("usage: delaybridge --config FILE"), std::string::npos);
  EXPECT_NE(help.output.find("3 --check could not reach the brokers"), std::string::npos);

  CommandResult version = RunBridge({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output, std::string("delaybridge ") + DELAYBRIDGE_VERSION + "\n");

  EXPECT_EQ(RunBridge({}).exit_code, 2);
  EXPECT_EQ(RunBridge({"--frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunBridge({"--config"}).exit_code, 2);
  CommandResult missing = RunBridge({"--config", "/nonexistent/config.yaml"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find(
                "config file /nonexistent/config.yaml: cannot read /nonexistent/config.yaml"),
            std::string::npos)
      << missing.output;
}

// Two bridges on one storage.dir would append to the same hour files: the second is refused
// before it touches Kafka or the stores.
TEST(BridgeCliTest, AStorageDirInUseIsRefused) {
  TempDir dir("bridge_cli_test");
  const std::string storage_dir = dir.File("data");
  ASSERT_EQ(::mkdir(storage_dir.c_str(), 0700), 0);
  const std::string lock_path = storage_dir + "/LOCK";
  const int holder = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  ASSERT_EQ(::write(holder, "4242\n", 5), 5);
  const std::string config =
      WriteConfig(dir, "config.yaml", Config("127.0.0.1:1", "", storage_dir));

  CommandResult refused = RunBridge({"--config", config});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.output.find("storage.dir: " + storage_dir +
                                " is in use by another process (pid 4242"),
            std::string::npos)
      << refused.output;
  ::close(holder);
}

// Every open hour holds two descriptors: the bridge raises its open-files soft limit to the hard
// one and says how many stores that leaves room for, with a warning when it is too few. The run
// stops right after, at a storage.dir it cannot create.
TEST(BridgeCliTest, OpenFilesSoftLimitIsRaisedToTheHardOne) {
  TempDir dir("bridge_cli_test");
  constexpr uint64_t kPerStore = 2 * 64 + 16;  // two per open hour, and some to spare
  const std::string config =
      WriteConfig(dir, "config.yaml",
                  Config("127.0.0.1:1", "  max_open_hours: 64\n", "/proc/delaybridge-no-dir"));
  const auto run_with_limit = [&](uint64_t soft, uint64_t hard) {
    return RunBridgeCommand("/usr/bin/prlimit",
                            {"--nofile=" + std::to_string(soft) + ":" + std::to_string(hard),
                             DELAYBRIDGE_BINARY, "--config", config},
                            seconds(60));
  };
  CommandResult tight = run_with_limit(64, 1000);
  EXPECT_EQ(tight.exit_code, 2) << tight.output;
  EXPECT_NE(tight.output.find("open files limit 1000: room for 6 stores (partitions) with "
                              "storage.max_open_hours=64 hours open each; raise the limit "
                              "(ulimit -n, LimitNOFILE=)"),
            std::string::npos)
      << tight.output;

  // The test's own hard limit: raising it would need CAP_SYS_RESOURCE.
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &own), 0);
  const uint64_t hard = own.rlim_max == RLIM_INFINITY ? 1 << 20 : own.rlim_max;
  ASSERT_GE(hard / kPerStore, 16u) << "hard open-files limit " << hard;
  CommandResult ample = run_with_limit(64, hard);
  EXPECT_NE(ample.output.find("open files limit " + std::to_string(hard) + ": room for " +
                              std::to_string(hard / kPerStore) + " stores"),
            std::string::npos)
      << ample.output;
  EXPECT_EQ(ample.output.find("raise the limit"), std::string::npos) << ample.output;
}

// A metrics.listen address another process holds is the operator's to fix: exit 2 (the service
// does not restart it), the address named.
TEST(BridgeCliTest, AMetricsPortInUseIsRefused) {
  TempDir dir("bridge_cli_test");
  const int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  const std::string config =
      "kafka:\n  bootstrap.servers: embedded\nroutes:\n  delayed: delivered\n"
      "allowed_targets: [delivered]\ndead_letter_topic: delayed.dlq\nstorage:\n  dir: " +
      dir.File("data") + "\nmetrics:\n  listen: \"127.0.0.1:" + port + "\"\n";
  const CommandResult refused = RunBridge({"--config", WriteConfig(dir, "config.yaml", config)});
  ::close(holder);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("metrics.listen: cannot listen on 127.0.0.1:" + port +
                                ": Address already in use"),
            std::string::npos)
      << refused.output;
}

TEST(BridgeCliTest, ConfigErrorsNameTheKeyAndExitTwo) {
  TempDir dir("bridge_cli_test");
  const std::pair<std::string, std::string> cases[] = {
      {"wheel:\n  tick_ms: abc\n", "wheel.tick_ms: must be a positive integer, got \"abc\""},
      {"wheel:\n  preload_seconds: 0\n", "wheel.preload_seconds: must be a positive integer"},
      {"max_delay: forever\n", "max_delay: must be a duration"},
      {"surprise: 1\n", "surprise: unknown key"},
      {"storage2:\n  dir: x\n", "storage2: unknown key"},
  };
  int i = 0;
  for (const auto& [extra, expected] : cases) {
    const std::string path =
        WriteConfig(dir, "bad" + std::to_string(i++) + ".yaml", Config("127.0.0.1:1", extra));
    for (bool check : {false, true}) {
      std::vector<std::string> args = {"--config", path};
      if (check) args.push_back("--check");
      const CommandResult r = RunBridge(args);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find(expected), std::string::npos)
          << "expected \"" << expected << "\" in:\n"
          << r.output;
    }
  }
}

TEST(BridgeCliTest, CheckReachesTheBrokerOrExitsThree) {
  TempDir dir("bridge_cli_test");
  auto cluster = TestCluster::Create();
  ASSERT_TRUE(cluster.ok());
  ASSERT_TRUE((*cluster)->CreateTopic("delayed", 2).ok());
  const std::string good = Config((*cluster)->bootstrap(), "", dir.File("data"));
  const CommandResult ok = RunBridge({"--config", WriteConfig(dir, "good.yaml", good), "--check"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("check passed"), std::string::npos) << ok.output;
  // Topics that do not exist are reported, but are not an error.
  EXPECT_NE(ok.output.find("topic delivered does not exist"), std::string::npos) << ok.output;

  const std::string unreachable = Config("127.0.0.1:1", "", dir.File("data"));
  const CommandResult down =
      RunBridge({"--config", WriteConfig(dir, "down.yaml", unreachable), "--check"});
  EXPECT_EQ(down.exit_code, 3) << down.output;
  EXPECT_NE(down.output.find("check failed"), std::string::npos) << down.output;
  // The client's own error says why: nothing listens there.
  EXPECT_NE(down.output.find("Connection refused"), std::string::npos) << down.output;
}

TEST(BridgeCliTest, EmbeddedCheckPrintsOneBootstrapLine) {
  TempDir dir("bridge_cli_test");
  const std::string config =
      "kafka:\n  bootstrap.servers: embedded\nroutes:\n  delayed: delivered\n"
      "allowed_targets: [delivered]\ndead_letter_topic: delayed.dlq\nstorage:\n  dir: " +
      dir.File("data") + "\n";
  const CommandResult r =
      RunBridge({"--config", WriteConfig(dir, "embedded.yaml", config), "--check"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  size_t lines = 0;
  for (size_t pos = r.output.find("bootstrap.servers=127.0.0.1:"); pos != std::string::npos;
       pos = r.output.find("bootstrap.servers=", pos + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << r.output;
  EXPECT_NE(r.output.find("kcat -b 127.0.0.1:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-H x-delay=5000"), std::string::npos) << r.output;
}

// log_format: json: every line the bridge logs (its own and librdkafka's) is one JSON object;
// the embedded broker's banner still goes to stdout as text.
TEST(BridgeCliTest, JsonLogFormatWritesOneObjectALine) {
  TempDir dir("bridge_cli_test");
  auto cluster = TestCluster::Create();
  ASSERT_TRUE(cluster.ok());
  const std::string config =
      Config((*cluster)->bootstrap(), "log_format: json\nlog_level: debug\n", dir.File("data"));
  const CommandResult r = RunBridge({"--config", WriteConfig(dir, "json.yaml", config), "--check"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  size_t objects = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::optional<plugin::JsonLogLine> fields = plugin::ParseJsonLogLine(line);
    ASSERT_TRUE(fields.has_value()) << line;
    EXPECT_TRUE(fields->level == "debug" || fields->level == "info" || fields->level == "warn" ||
                fields->level == "error")
        << line;
    ++objects;
  }
  EXPECT_GE(objects, 3u) << r.output;  // the start, the file limit, the check
  EXPECT_NE(r.output.find(R"("level":"info","message":"check passed)"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace delaybridge::testing
