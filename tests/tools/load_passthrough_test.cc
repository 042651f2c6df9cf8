// delaybridge-load, run as a binary against its embedded cluster in passthrough mode: the
// baseline pipe delivers every record exactly once and the --json report says so.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/tools/load_child_process.h"
#include "tests/tools/load_report_check.h"

namespace delaybridge::load {
namespace {

constexpr int kRunTimeoutMs = 90'000;

TEST(LoadPassthrough, DeliversEveryRecordOnceAndReportsIt) {
  const std::string out_path = TempPath("load_passthrough_test.json");
  Result<std::unique_ptr<ChildProcess>> load =
      ChildProcess::Start({DELAYBRIDGE_LOAD_BIN, "--bootstrap", "embedded", "--mode", "passthrough",
                           "--count", "300", "--delay", "uniform:0..2s", "--headers", "mixed",
                           "--embedded-partitions", "4", "--timeout", "30s", "--json"},
                          out_path);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  ASSERT_NO_FATAL_FAILURE(ExpectCleanRun(**load, 300, kRunTimeoutMs));
  std::remove(out_path.c_str());
}

TEST(LoadPassthrough, BadArgumentsExitTwoWithoutTouchingKafka) {
  const std::string out_path = TempPath("load_bad_args_test.txt");
  Result<std::unique_ptr<ChildProcess>> load =
      ChildProcess::Start({DELAYBRIDGE_LOAD_BIN, "--bootstrap", "embedded", "--count", "10",
                           "--delay", "uniform:5s..1s"},
                          out_path);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  Result<int> exit_code = (*load)->WaitForExit(kRunTimeoutMs);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  EXPECT_EQ(*exit_code, 2);
  std::remove(out_path.c_str());
}

TEST(LoadPassthrough, AnUncreatableLateRecordsFileIsABadArgumentBeforeTheRun) {
  const std::string out_path = TempPath("load_bad_late_records_test.txt");
  Result<std::unique_ptr<ChildProcess>> load = ChildProcess::Start(
      {DELAYBRIDGE_LOAD_BIN, "--bootstrap", "embedded", "--mode", "passthrough", "--count", "10",
       "--late-records", "/nonexistent-directory/late.txt", "--json"},
      out_path);
  ASSERT_TRUE(load.ok()) << load.status().ToString();
  Result<int> exit_code = (*load)->WaitForExit(kRunTimeoutMs);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  EXPECT_EQ(*exit_code, 2);
  EXPECT_EQ((*load)->Output().find("\"produced\""), std::string::npos)
      << "nothing was produced: " << (*load)->Output();
  std::remove(out_path.c_str());
}

}  // namespace
}  // namespace delaybridge::load
