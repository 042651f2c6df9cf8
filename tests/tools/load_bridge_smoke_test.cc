// Smoke test of the load tool against the real bridge: start `delaybridge` with its embedded
// broker, read the broker address from its banner, run delaybridge-load with 300 records due
// within 0-2 s, and check the report: everything delivered exactly once, nothing early.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tools/load_child_process.h"
#include "tests/tools/load_json_field.h"

namespace delaybridge::load {
namespace {

constexpr int kBannerTimeoutMs = 30'000;
constexpr int kLoadTimeoutMs = 120'000;
constexpr const char* kBootstrapMarker = "bootstrap.servers=";

// A fresh directory for the bridge's config and DelayLog, removed at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base ? base : "/tmp") + "/load_bridge_smoke.XXXXXX";
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string WriteEmbeddedConfig(const std::string& dir) {
  const std::string path = dir + "/config.yaml";
  std::ofstream(path) << "kafka:\n"
                         "  bootstrap.servers: embedded\n"
                         "routes:\n"
                         "  delayed: delivered\n"
                         "allowed_targets: [delivered]\n"
                         "dead_letter_topic: delayed.dlq\n"
                         "storage:\n"
                         "  dir: "
                      << dir
                      << "/data\n"
                         "wheel:\n"
                         "  tick_ms: 1\n"
                         "  preload_seconds: 5\n"
                         "max_delay: 3650d\n"
                         "metrics:\n"
                         "  listen: \"127.0.0.1:0\"\n";
  return path;
}

// "... bootstrap.servers=127.0.0.1:PORT ..." -> "127.0.0.1:PORT"
std::string BootstrapFrom(const std::string& line) {
  const size_t start = line.find(kBootstrapMarker) + std::string(kBootstrapMarker).size();
  const size_t end = line.find_first_of(" \t,;", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(LoadBridgeSmoke, EveryRecordArrivesOnceAndNoneEarly) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string config = WriteEmbeddedConfig(dir.path());
  Result<std::unique_ptr<ChildProcess>> bridge =
      ChildProcess::Start({DELAYBRIDGE_BRIDGE_BIN, "--config", config}, dir.path() + "/bridge.out");
  ASSERT_TRUE(bridge.ok()) << bridge.status().ToString();
  Result<std::string> banner = (*bridge)->WaitForLine(
      [](const std::string& line) { return line.find(kBootstrapMarker) != std::string::npos; },
      kBannerTimeoutMs);
  ASSERT_TRUE(banner.ok()) << banner.status().ToString();
  const std::string bootstrap = BootstrapFrom(*banner);

  Result<std::unique_ptr<ChildProcess>> load = ChildProcess::Start(
      {DELAYBRIDGE_LOAD_BIN, "--bootstrap", bootstrap, "--count", "300", "--delay", "uniform:0..2s",
       "--headers", "mixed", "--timeout", "40s", "--json"},
      dir.path() + "/load.json");
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  Result<int> exit_code = (*load)->WaitForExit(kLoadTimeoutMs);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  const std::string json = (*load)->Output();
  EXPECT_EQ(*exit_code, 0) << "bootstrap " << bootstrap << ": " << json;
  EXPECT_EQ(JsonNumber(json, "produced"), 300) << json;
  EXPECT_EQ(JsonNumber(json, "delivered"), 300) << json;
  EXPECT_EQ(JsonNumber(json, "lost"), 0) << json;
  EXPECT_EQ(JsonNumber(json, "duplicates"), 0) << json;
  EXPECT_EQ(JsonNumber(json, "early"), 0) << json;
  // Every acknowledged record of the run has a produce-to-acknowledgement latency.
  EXPECT_NE(json.find("\"produce_ack_ms\":{\"count\":300,"), std::string::npos) << json;
}

}  // namespace
}  // namespace delaybridge::load
