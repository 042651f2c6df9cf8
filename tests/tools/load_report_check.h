// ExpectCleanRun: waits for a delaybridge-load run to exit and checks its --json report: exit 0,
// every record produced and delivered exactly once, none lost, early or foreign.
//
// Thread-safety: a gtest helper; the test's thread.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/tools/load_child_process.h"
#include "tests/tools/load_json_field.h"

namespace delaybridge::load {

// Fails the test when the run does not exit within timeout_ms (call under
// ASSERT_NO_FATAL_FAILURE to stop there).
inline void ExpectCleanRun(ChildProcess& load, int records, int timeout_ms) {
  Result<int> exit_code = load.WaitForExit(timeout_ms);
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().ToString();
  const std::string json = load.Output();
  EXPECT_EQ(*exit_code, 0) << json;
  EXPECT_EQ(JsonNumber(json, "produced"), records) << json;
  EXPECT_EQ(JsonNumber(json, "delivered"), records) << json;
  EXPECT_EQ(JsonNumber(json, "lost"), 0) << json;
  EXPECT_EQ(JsonNumber(json, "duplicates"), 0) << json;
  EXPECT_EQ(JsonNumber(json, "early"), 0) << json;
  EXPECT_EQ(JsonNumber(json, "foreign"), 0) << json;
}

}  // namespace delaybridge::load
