// delaybridge-load --mode direct on its embedded cluster: the tool produces straight to the
// target topic and measures its own records there, with no deliverer in between.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/tools/load_child_process.h"
#include "tests/tools/load_report_check.h"

namespace delaybridge::load {
namespace {

constexpr int kRunTimeoutMs = 90'000;
constexpr int kRecords = 300;

TEST(LoadDirect, EveryRecordReachesTheTargetOnceWithNothingDeliveringIt) {
  const std::string out_path = TempPath("load_direct_test.json");
  Result<std::unique_ptr<ChildProcess>> load = ChildProcess::Start(
      {DELAYBRIDGE_LOAD_BIN, "--mode", "direct", "--bootstrap", "embedded", "--count",
       std::to_string(kRecords), "--rate", "1000", "--timeout", "20s", "--json"},
      out_path);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  ASSERT_NO_FATAL_FAILURE(ExpectCleanRun(**load, kRecords, kRunTimeoutMs));
  std::remove(out_path.c_str());
}

}  // namespace
}  // namespace delaybridge::load
