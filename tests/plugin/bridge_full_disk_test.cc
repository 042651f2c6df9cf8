// A full disk under the bridge: appends the disk refuses are held while consumption pauses,
// deliveries of what is stored go on, and once there is room again the bridge resumes by itself
// and every record is delivered exactly once, never early, without a restart.
#include <gtest/gtest.h>

#include "tests/support/bridge_fixture.h"
#include "tests/support/small_filesystem.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class BridgeFullDiskTest : public BridgeFixture {};

TEST_F(BridgeFullDiskTest, PausesOnAFullDiskAndResumesWithNothingLostOrDoubled) {
  SmallFilesystem disk("bridge_full_disk_test", 16 * 1024 * 1024);
  if (!disk.mounted()) GTEST_SKIP() << disk.error();
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.storage_dir = disk.path() + "/data"}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 13;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 3000));
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 1000));
  std::this_thread::sleep_for(seconds(1));  // stored before the disk fills

  ASSERT_TRUE(disk.Fill());
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 4000));
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (bridge_->CountInLog("No space left on device") == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the disk never refused\n"
                                                          << LogTail();
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::this_thread::sleep_for(seconds(3));  // full for a while; the bridge must not exit
  ASSERT_TRUE(bridge_->running()) << LogTail();
  EXPECT_GE(bridge_->CountInLog("INFO  pausing consumption"), 1u) << LogTail();

  disk.Free();
  const bool all = ReceiveWorkload(workload, seconds(90), seconds(2));
  const DeliveryReport report = CheckReceived(workload);
  EXPECT_TRUE(all) << report.ToString();
  EXPECT_EQ(report.expected, 5000u);
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  EXPECT_GE(bridge_->CountInLog("INFO  the stores take records again"), 1u) << LogTail();
  EXPECT_GE(bridge_->CountInLog("INFO  resuming consumption"), 1u) << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());
  EXPECT_EQ(bridge_->CountInLog("ERROR"), 0u) << LogTail();
}

}  // namespace
}  // namespace delaybridge::testing
