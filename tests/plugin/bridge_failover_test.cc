// Failover on the mock cluster: two instances in one consumer group, each with its own
// storage.dir (two machines). One is killed for good while records are pending; the survivor
// takes its partitions over, rebuilds their stores from the delay topic (the committed low
// watermark and progress metadata, docs/bridge.md "Kafka holds the truth") and delivers every
// record, never early. Duplicates are only records the dead instance delivered shortly before
// it died.
#include <gtest/gtest.h>

#include <thread>

#include "tests/plugin/bridge_test_env.h"
#include "tests/plugin/delay_workload.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class BridgeFailoverTest : public BridgeTestEnv {
 protected:
  void TearDown() override {
    if (HasFailure() && second_) std::cerr << "---- instance b log ----\n" << second_->Log();
    if (second_) second_->Kill();
    BridgeTestEnv::TearDown();
  }

  std::unique_ptr<BridgeProcess> second_;
};

TEST_F(BridgeFailoverTest, SurvivorDeliversEveryRecordOfAnInstanceKilledForGood) {
  BridgeTestOptions options;
  options.delay_partitions = 4;
  ASSERT_NO_FATAL_FAILURE(Prepare(options));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  second_ = MakeInstance("b");
  ASSERT_TRUE(second_->Start().ok());
  // Cooperative rebalancing hands the newcomer its share without stopping the first instance.
  ASSERT_TRUE(second_->WaitForLog("INFO  assigned " + delay_topic_, seconds(60))) << second_->Log();
  ASSERT_TRUE(bridge_->WaitForLog("INFO  revoked " + delay_topic_, seconds(30))) << LogTail();

  const uint32_t seed = 31;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(seed, delay_topic_, target_topic_, alt_topic_, options_.target_partitions);
  constexpr size_t kRecords = 2000;
  for (size_t i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(producer_->Produce(workload.Next(NowMs() + 2000, 10'000)).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  std::this_thread::sleep_for(milliseconds(2500));  // some delivered, most pending
  const int64_t kill_ms = NowMs();
  bridge_->Kill();  // for good: its storage.dir is never used again

  bool all = false;
  const std::vector<TestRecord> delivered =
      CollectDeliveries(workload, kRecords, seconds(120), seconds(2), &all);
  const DeliveryCheck check = workload.Check(delivered);
  std::cout << "failover: " << kRecords << " records, first instance killed at " << kill_ms << ": "
            << check.Summary() << "\n";
  EXPECT_TRUE(all);
  EXPECT_TRUE(check.missing.empty()) << check.Summary();
  EXPECT_TRUE(check.errors.empty()) << check.Summary();  // includes early deliveries
  EXPECT_GE(second_->CountInLog("rebuilding it from the delay topic"), 2u) << second_->Log();

  // Every duplicate's first copy came from the dead instance shortly before it died: delivered
  // after its last progress commit (every 100 ms), or late records whose second the
  // checkpoint had not passed yet.
  constexpr int64_t kWindowMs = 2000;
  std::map<std::string, int64_t> first_copy_ms;
  for (const auto& r : delivered) {
    auto [it, inserted] = first_copy_ms.emplace(*r.Header("seq"), r.timestamp_ms);
    if (!inserted) it->second = std::min(it->second, r.timestamp_ms);
  }
  for (const auto& [seq, extra] : check.duplicates) {
    const int64_t first_ms = first_copy_ms.at(std::to_string(seq));
    SCOPED_TRACE("seq " + std::to_string(seq) + " first copy at " + std::to_string(first_ms));
    EXPECT_EQ(extra, 1u);
    EXPECT_LE(first_ms, kill_ms);
    EXPECT_GE(first_ms, kill_ms - kWindowMs);
  }
  auto code = second_->Terminate(seconds(60));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace delaybridge::testing
