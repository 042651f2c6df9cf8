// delaybridge-load --mode pipe, run as a process of its own on its embedded cluster, measured
// by a second delaybridge-load in bridge mode as a benchmark measures a bridge: every record
// arrives once, and on SIGTERM the pipe exits cleanly and reports what it forwarded.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/tools/load_child_process.h"
#include "tests/tools/load_json_field.h"
#include "tests/tools/load_report_check.h"

namespace delaybridge::load {
namespace {

constexpr int kReadyTimeoutMs = 30'000;
constexpr int kRunTimeoutMs = 90'000;
constexpr int kStopTimeoutMs = 30'000;
constexpr const char* kReadyMarker = "pipe ready bootstrap.servers=";
constexpr int kRecords = 300;
constexpr int kWarmupRecords = 10;  // the load tool's default --warmup

// Starts `delaybridge-load --mode pipe` on an embedded cluster and returns it with the cluster's
// address, once it forwards.
Result<std::unique_ptr<ChildProcess>> StartPipe(const std::string& out_path,
                                                std::vector<std::string> extra_args,
                                                std::string* bootstrap) {
  std::vector<std::string> argv = {
      DELAYBRIDGE_LOAD_BIN,    "--mode", "pipe",  "--bootstrap", "embedded",
      "--embedded-partitions", "4",      "--json"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  Result<std::unique_ptr<ChildProcess>> pipe = ChildProcess::Start(argv, out_path);
  if (!pipe.ok()) return pipe.status();
  Result<std::string> ready = (*pipe)->WaitForLine(
      [](const std::string& line) { return line.find(kReadyMarker) != std::string::npos; },
      kReadyTimeoutMs);
  if (!ready.ok()) return ready.status();
  *bootstrap = ready->substr(ready->find(kReadyMarker) + std::string(kReadyMarker).size());
  return pipe;
}

TEST(LoadPipe, ForwardsEveryRecordOnceAndReportsTheCountOnSigterm) {
  const std::string pipe_path = TempPath("load_pipe_test.pipe.out");
  const std::string load_path = TempPath("load_pipe_test.load.json");
  std::string bootstrap;
  Result<std::unique_ptr<ChildProcess>> pipe = StartPipe(pipe_path, {}, &bootstrap);
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();

  Result<std::unique_ptr<ChildProcess>> load = ChildProcess::Start(
      {DELAYBRIDGE_LOAD_BIN, "--bootstrap", bootstrap, "--count", std::to_string(kRecords),
       "--headers", "mixed", "--timeout", "30s", "--json"},
      load_path);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  ASSERT_NO_FATAL_FAILURE(ExpectCleanRun(**load, kRecords, kRunTimeoutMs));

  Result<int> pipe_exit = (*pipe)->Terminate(kStopTimeoutMs);
  ASSERT_TRUE(pipe_exit.ok()) << pipe_exit.status().ToString();
  const std::string report = (*pipe)->Output();
  EXPECT_EQ(*pipe_exit, 0) << report;
  EXPECT_EQ(JsonNumber(report, "forwarded"), kRecords + kWarmupRecords) << report;
  std::remove(pipe_path.c_str());
  std::remove(load_path.c_str());
}

TEST(LoadPipe, StopsByItselfAfterDuration) {
  const std::string pipe_path = TempPath("load_pipe_duration_test.out");
  std::string bootstrap;
  Result<std::unique_ptr<ChildProcess>> pipe =
      StartPipe(pipe_path, {"--duration", "500ms"}, &bootstrap);
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  Result<int> exit_code = (*pipe)->WaitForExit(kStopTimeoutMs);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  const std::string report = (*pipe)->Output();
  EXPECT_EQ(*exit_code, 0) << report;
  EXPECT_EQ(JsonNumber(report, "forwarded"), 0) << report;
  EXPECT_GE(JsonNumber(report, "run_ms").value_or(0), 500) << report;
  std::remove(pipe_path.c_str());
}

}  // namespace
}  // namespace delaybridge::load
