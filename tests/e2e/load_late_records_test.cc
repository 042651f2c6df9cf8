// delaybridge-load on the real broker: --late-records lists every record whose LogAppendTime on
// the target came more than --late-over after its deliver-at, and nothing else. Only a real
// broker stamps LogAppendTime (--create-topics makes the target so); the mock cluster's
// timestamps are the producer's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/now_ms.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"
#include "tests/tools/load_child_process.h"
#include "tests/tools/load_json_field.h"

namespace delaybridge::load {
namespace {

constexpr int kRunTimeoutMs = 120'000;
constexpr int kRecords = 2'000;

// Runs the tool's pass-through pipe over fresh topics: each record is due when produced, so it
// reaches the target some milliseconds late, and the list holds the records later than
// late_over. Returns the list's lines as (deliver-at, LogAppendTime) pairs.
std::vector<std::pair<int64_t, int64_t>> LateRecordsOfARun(const std::string& late_over) {
  Result<std::string> bootstrap = testing::RealBrokerBootstrap();
  EXPECT_TRUE(bootstrap.ok()) << bootstrap.status().ToString();
  if (!bootstrap.ok()) return {};
  testing::TempDir dir("load-late-records");
  const std::string run = std::to_string(getpid()) + "-" + std::to_string(testing::NowMs());
  const std::string late_path = dir.File("late.txt");
  Result<std::unique_ptr<ChildProcess>> load = ChildProcess::Start({DELAYBRIDGE_LOAD_BIN,
                                                                    "--bootstrap",
                                                                    *bootstrap,
                                                                    "--mode",
                                                                    "passthrough",
                                                                    "--create-topics",
                                                                    "2",
                                                                    "--delay-topic",
                                                                    "late.in." + run,
                                                                    "--target-topic",
                                                                    "late.out." + run,
                                                                    "--count",
                                                                    std::to_string(kRecords),
                                                                    "--rate",
                                                                    "2000",
                                                                    "--timeout",
                                                                    "60s",
                                                                    "--late-over",
                                                                    late_over,
                                                                    "--late-records",
                                                                    late_path,
                                                                    "--json"},
                                                                   dir.File("report.json"));
  EXPECT_TRUE(load.ok()) << load.status().ToString();
  if (!load.ok()) return {};
  Result<int> exit_code = (*load)->WaitForExit(kRunTimeoutMs);
  EXPECT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  const std::string report = (*load)->Output();
  EXPECT_EQ(exit_code.ok() ? *exit_code : -1, 0) << report;
  EXPECT_EQ(JsonNumber(report, "delivered"), kRecords) << report;

  std::vector<std::pair<int64_t, int64_t>> late;
  std::ifstream in(late_path);
  EXPECT_TRUE(in.good()) << late_path;
  int64_t deliver_at_ms = 0;
  int64_t appended_ms = 0;
  while (in >> deliver_at_ms >> appended_ms) late.emplace_back(deliver_at_ms, appended_ms);
  EXPECT_TRUE(in.eof()) << "a line of " << late_path << " is not two numbers";
  return late;
}

TEST(LoadLateRecords, ListsTheRecordsLaterThanTheThreshold) {
  const std::vector<std::pair<int64_t, int64_t>> late = LateRecordsOfARun("0ms");
  // A record cannot be appended to the target in the millisecond it was produced to the source
  // every time: consuming and producing it again takes longer.
  ASSERT_FALSE(late.empty());
  EXPECT_LE(late.size(), static_cast<size_t>(kRecords));
  for (const auto& [deliver_at_ms, appended_ms] : late) {
    EXPECT_GT(appended_ms, deliver_at_ms);
    EXPECT_GT(deliver_at_ms, 1'700'000'000'000) << "an epoch millisecond";
  }
}

TEST(LoadLateRecords, ListsNothingBelowTheThreshold) {
  // No record of a 1-second run on an idle broker is an hour late.
  EXPECT_TRUE(LateRecordsOfARun("1h").empty());
}

}  // namespace
}  // namespace delaybridge::load
