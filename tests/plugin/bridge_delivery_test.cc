// The bridge end to end against a mock cluster, as a child process: 10,000 records with random
// delays of 0-10 s, both header styles, some redirected with x-target-topic, are each delivered
// exactly once, to the right topic and partition, never early, with key, value and headers
// intact.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

class BridgeDeliveryTest : public BridgeFixture {};

TEST_F(BridgeDeliveryTest, TenThousandRecordsExactlyOnceOnTimeIntact) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  const uint32_t seed = 4242;
  SCOPED_TRACE("workload seed " + std::to_string(seed));
  DelayWorkload workload(Spec(seed, 10'000));
  constexpr int kRecords = 10'000;
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, kRecords));

  const bool all = ReceiveWorkload(workload, std::chrono::seconds(90), std::chrono::seconds(2));
  const DeliveryReport report = CheckReceived(workload);
  std::cout << "10k delivery: " << report.ToString() << "\n";
  EXPECT_TRUE(all) << report.ToString();
  ExpectNoneLostEarlyOrAltered(report);
  EXPECT_EQ(report.duplicates, 0u) << report.ToString();
  EXPECT_EQ(report.delivered, static_cast<size_t>(kRecords));

  EXPECT_TRUE(bridge_->running());
  ASSERT_NO_FATAL_FAILURE(StopBridge());
  EXPECT_GE(bridge_->CountInLog("lateness at produce: count="), 1u);
  EXPECT_EQ(bridge_->CountInLog("ERROR"), 0u) << LogTail();
}

// kafka_stats_file: librdkafka's statistics of the consumer and the producer, one JSON object a
// line, while records flow.
TEST_F(BridgeDeliveryTest, KafkaStatisticsOfBothClientsGoToTheStatsFile) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.delay_partitions = 2, .kafka_stats = true}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  DelayWorkload workload(Spec(7, 500));
  constexpr int kRecords = 200;
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, kRecords));
  EXPECT_TRUE(ReceiveWorkload(workload, std::chrono::seconds(60), std::chrono::milliseconds(300)))
      << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());

  std::ifstream in(kafka_stats_path());
  ASSERT_TRUE(in.good()) << kafka_stats_path();
  size_t producer_lines = 0, consumer_lines = 0;
  for (std::string line; std::getline(in, line);) {
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.front(), '{') << line.substr(0, 200);
    EXPECT_EQ(line.back(), '}') << line.substr(line.size() > 200 ? line.size() - 200 : 0);
    if (line.find("\"type\": \"producer\"") != std::string::npos) ++producer_lines;
    if (line.find("\"type\": \"consumer\"") != std::string::npos) ++consumer_lines;
  }
  EXPECT_GE(producer_lines, 1u);
  EXPECT_GE(consumer_lines, 1u);
  EXPECT_EQ(bridge_->CountInLog("ERROR"), 0u) << LogTail();
}

}  // namespace
}  // namespace delaybridge::testing
