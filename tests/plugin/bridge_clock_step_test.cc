// A wall clock that ran an hour ahead and was stepped back (NTP, a VM resumed with a wrong clock):
// the bridge's delivered checkpoints followed the clock an hour ahead and never move back. The
// bridge stops on the step (librdkafka could stall for the hour); restarted, it reads the
// checkpoints back from disk, and records produced afterwards are still delivered at the times
// they ask for, before and after a crash.
//
// The bridge runs under libfaketime (Debian's faketime package), which shifts its wall clock by
// the offset in a file the test rewrites; its monotonic clock (Asio timers, librdkafka) is left
// alone, as NTP leaves it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>

#include "storage/delivery_checkpoint.h"
#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kStepMs = 3'600'000;
constexpr char kStepOffset[] = "+3600";  // libfaketime: seconds

class BridgeClockStepTest : public BridgeFixture {
 protected:
  // Runs the bridge with its wall clock offset by what offset_file() says.
  void UseFakeClock() {
    ASSERT_FALSE(std::string(DELAYBRIDGE_LIBFAKETIME).empty())
        << "libfaketime not found at configure time: install Debian's faketime package "
           "(scripts/setup.sh does)";
    SetClockOffset("+0");
    const char* asan = std::getenv("ASAN_OPTIONS");
    bridge_->set_environment({
        std::string("LD_PRELOAD=") + DELAYBRIDGE_LIBFAKETIME,
        "FAKETIME_TIMESTAMP_FILE=" + offset_file(),
        "FAKETIME_CACHE_DURATION=1",  // the file is read again every second
        "FAKETIME_DONT_FAKE_MONOTONIC=1",
        // libfaketime is preloaded ahead of the sanitizer runtime in the sanitizer build.
        std::string("ASAN_OPTIONS=") + (asan ? std::string(asan) + ":" : "") +
            "verify_asan_link_order=0",
    });
  }

  std::string offset_file() const { return dir_->File("faketime-offset"); }
  void SetClockOffset(const std::string& offset) {
    std::ofstream(offset_file(), std::ios::trunc) << offset << "\n";
  }

  // The lowest delivered checkpoint of the bridge's stores (0 while one has none).
  int64_t LowestCheckpointMs() const {
    int64_t lowest = std::numeric_limits<int64_t>::max();
    for (int p = 0; p < options_.delay_partitions; ++p) {
      const std::string store = dir_->File("data/" + delay_topic_ + "-" + std::to_string(p));
      auto cp = storage::ReadDeliveryCheckpoint(store);
      if (!cp.ok() || !cp->has_value()) return 0;
      lowest = std::min(lowest, (*cp)->next_deliver_at_ms);
    }
    return lowest;
  }

  // Reads the targets until every record of workload arrived (or timeout), then checks them:
  // none lost, none early, none later than max_late_ms.
  void ExpectDeliveredOnTime(const DelayWorkload& workload, milliseconds timeout,
                             int64_t max_late_ms) {
    const bool all = ReceiveWorkload(workload, timeout, seconds(1));
    const DeliveryReport report = CheckReceived(workload);
    std::cout << "clock step: " << report.ToString() << "\n";
    EXPECT_TRUE(all) << "records held back after the clock stepped back: " << report.ToString();
    ExpectNoneLostEarlyOrAltered(report);
    EXPECT_LE(report.produce_lateness.max_ms, max_late_ms) << report.ToString();
  }
};

TEST_F(BridgeClockStepTest, RecordsAfterAClockStepBackAreDeliveredOnTimeBeforeAndAfterACrash) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.delay_partitions = 2}));
  ASSERT_NO_FATAL_FAILURE(UseFakeClock());
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  // An hour ahead until every store's checkpoint has followed the clock there, then back.
  SetClockOffset(kStepOffset);
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (LowestCheckpointMs() < NowMs() + kStepMs - 60'000) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "checkpoints never moved ahead";
    std::this_thread::sleep_for(milliseconds(100));
  }
  SetClockOffset("+0");
  // librdkafka could stall for the hour: the bridge stops, for its supervisor to restart it.
  auto code = bridge_->WaitForExit(seconds(60));
  ASSERT_TRUE(code.ok()) << code.status().ToString() << "\n" << LogTail();
  EXPECT_EQ(*code, 1);
  EXPECT_EQ(bridge_->CountInLog("ERROR Unavailable: the wall clock stepped back by"), 1u)
      << LogTail();

  // Restarted, it reads the checkpoints, an hour ahead, back from disk.
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  EXPECT_EQ(bridge_->CountInLog("ms ahead of the clock"),
            static_cast<size_t>(options_.delay_partitions))
      << LogTail();
  DelayWorkload workload(Spec(31, 3000));
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 300));
  // Generous for a loaded sanitizer build, and far below the hour they were held before.
  ASSERT_NO_FATAL_FAILURE(ExpectDeliveredOnTime(workload, seconds(60), 15'000));

  // The same after a crash.
  bridge_->Kill();
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  EXPECT_EQ(bridge_->CountInLog("ms ahead of the clock"),
            static_cast<size_t>(2 * options_.delay_partitions))
      << LogTail();
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, 300));
  // Records delivered shortly before the crash may come again after the restart, which waits
  // out the killed member's session: later than the new ones, still far from an hour.
  ASSERT_NO_FATAL_FAILURE(ExpectDeliveredOnTime(workload, seconds(60), 60'000));
}

}  // namespace
}  // namespace delaybridge::testing
