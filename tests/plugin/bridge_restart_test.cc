// Restarts mid-stream: a clean stop (SIGTERM) and a crash (SIGKILL) while records keep coming.
// Nothing is lost; a clean stop duplicates nothing; after the crash only the records of the
// bound in docs/bridge.md may arrive twice: delivered shortly before the kill (acknowledged but
// not yet checkpointed, or in flight), or consumed in the last group-commit window before it
// (then both copies come after the restart).
#include <gtest/gtest.h>

#include <thread>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class BridgeRestartTest : public BridgeFixture {
 protected:
  // Produces about rate_per_s records per second for duration (the workload's delays).
  void ProduceFor(DelayWorkload& workload, milliseconds duration, int rate_per_s) {
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      for (int i = 0; i < rate_per_s / 20; ++i) {
        ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  }
};

TEST_F(BridgeRestartTest, SigtermAndSigkillLoseNothingAndDuplicateOnlyAroundTheCrash) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  const uint32_t seed = 77;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 6000));  // due 0-6 s later

  ASSERT_NO_FATAL_FAILURE(ProduceFor(workload, seconds(2), 400));
  const int64_t sigterm_ms = NowMs();
  ASSERT_NO_FATAL_FAILURE(StopBridge());                           // exit code 0
  ASSERT_NO_FATAL_FAILURE(ProduceFor(workload, seconds(1), 400));  // while it is down
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  ASSERT_NO_FATAL_FAILURE(ProduceFor(workload, seconds(3), 400));
  const int64_t kill_ms = NowMs();
  bridge_->Kill();
  ASSERT_NO_FATAL_FAILURE(ProduceFor(workload, seconds(1), 400));
  ASSERT_NO_FATAL_FAILURE(StartBridge());  // waits out the dead member's session timeout
  ASSERT_NO_FATAL_FAILURE(ProduceFor(workload, seconds(1), 400));

  const size_t total = workload.size();
  ReceiveWorkload(workload, seconds(90), seconds(2));
  const DeliveryReport report = CheckReceived(workload);
  std::cout << "restart: " << total << " records, sigterm at " << sigterm_ms << ", kill at "
            << kill_ms << ": " << report.ToString() << "\n";
  ExpectNoneLostEarlyOrAltered(report);

  // A duplicate either had its first copy delivered by the killed run shortly before the kill
  // (acknowledged after the last checkpoint write, or in flight), or was consumed by the killed
  // run in its last group-commit window (produced shortly before the kill; both copies come
  // after the restart). The window allows the checkpoint interval (100 ms), the group commit
  // and acknowledgement latency on a loaded sanitizer build.
  constexpr int64_t kWindowMs = 2000;
  size_t delivered_before_kill = 0;
  size_t consumed_before_kill = 0;
  for (const auto& [id, copies] : report.duplicated) {
    const size_t extra = copies.size() - 1;
    int64_t first_ms = copies.front().timestamp_ms;
    for (const TestRecord& copy : copies) first_ms = std::min(first_ms, copy.timestamp_ms);
    const int64_t produced_ms = workload.CreatedMs(id);
    SCOPED_TRACE("id " + std::to_string(id) + " duplicated " + std::to_string(extra) +
                 ", first copy at " + std::to_string(first_ms) + ", produced at " +
                 std::to_string(produced_ms));
    EXPECT_LE(extra, 2u);  // at most: delivered before the kill, reloaded, re-consumed
    if (first_ms <= kill_ms) {
      ++delivered_before_kill;
      EXPECT_GE(first_ms, kill_ms - kWindowMs);
    } else {
      ++consumed_before_kill;
      EXPECT_GE(produced_ms, kill_ms - kWindowMs);
      EXPECT_LE(produced_ms, kill_ms);
    }
  }
  std::cout << "restart: duplicates delivered shortly before the kill: " << delivered_before_kill
            << ", consumed in the last commit window: " << consumed_before_kill << "\n";
  EXPECT_TRUE(bridge_->running());
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
