// The bridge's HTTP endpoints as an operator's scraper and probes see them: /metrics counts
// what the bridge did (and promtool accepts it), /healthz answers, and /readyz is 200 while the
// partitions are assigned and the broker answers, 503 with the reason while it does not.
#include <gtest/gtest.h>

#include <iostream>
#include <thread>

#include "tests/support/bridge_fixture.h"
#include "tests/support/http_get.h"
#include "tests/support/promtool.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class BridgeHttpTest : public BridgeFixture {
 protected:
  HttpResult Get(const std::string& path) {
    auto result = HttpGet("127.0.0.1", port_, path);
    EXPECT_TRUE(result.ok()) << path << ": " << result.status().ToString();
    return result.ok() ? *result : HttpResult{};
  }

  // The value of the sample line starting with series ("name{labels}"); -1 when absent.
  static double Sample(const std::string& text, const std::string& series) {
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }

  // Scrapes until predicate holds on the text or timeout passes; returns the last text.
  template <typename Predicate>
  std::string ScrapeUntil(Predicate predicate, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string text;
    while (std::chrono::steady_clock::now() < deadline) {
      text = Get("/metrics").body;
      if (predicate(text)) break;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return text;
  }

  // Polls /readyz until it answers status or timeout passes; returns the last response.
  HttpResult ReadyzUntil(int status, milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    HttpResult last;
    while (std::chrono::steady_clock::now() < deadline) {
      last = Get("/readyz");
      if (last.status == status) break;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return last;
  }

  uint16_t port_ = 0;
};

TEST_F(BridgeHttpTest, MetricsCountDeliveriesAndProbesAnswer) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.delay_partitions = 2}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  port_ = MetricsPort();
  ASSERT_NE(port_, 0);

  const HttpResult health = Get("/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok\n");
  const HttpResult ready = ReadyzUntil(200, seconds(10));
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(ready.body, "ready: 2 partition(s) assigned\n");

  DelayWorkload workload(Spec(11, 1000));
  constexpr int kRecords = 300;
  ASSERT_NO_FATAL_FAILURE(ProduceWorkload(workload, kRecords));
  EXPECT_TRUE(ReceiveWorkload(workload, seconds(60), milliseconds(300))) << LogTail();

  const std::string text = ScrapeUntil(
      [](const std::string& t) {
        return Sample(t, "delaybridge_records_delivered_total") >= kRecords;
      },
      seconds(10));
  EXPECT_EQ(Sample(text, "delaybridge_records_delivered_total"), kRecords) << text;
  EXPECT_EQ(Sample(text, "delaybridge_records_consumed_total"), kRecords) << text;
  EXPECT_EQ(Sample(text, "delaybridge_records_stored_total"), kRecords) << text;
  EXPECT_EQ(Sample(text, "delaybridge_records_dead_lettered_total{reason=\"rejected\"}"), 0);
  EXPECT_EQ(Sample(text, "delaybridge_delivery_lateness_seconds_count"), kRecords) << text;
  EXPECT_EQ(Sample(text, "delaybridge_partitions_assigned"), 2) << text;
  EXPECT_EQ(Sample(text, "delaybridge_records_in_memory"), 0) << text;
  for (int p = 0; p < 2; ++p) {
    const std::string labels =
        "{topic=\"" + delay_topic_ + "\",partition=\"" + std::to_string(p) + "\"}";
    EXPECT_EQ(Sample(text, "delaybridge_consumer_lag_records" + labels), 0) << text;
    EXPECT_GT(Sample(text, "delaybridge_store_bytes" + labels), 0) << text;
    EXPECT_GT(Sample(text, "delaybridge_delivered_until_seconds" + labels), NowMs() / 1000 - 60)
        << text;
  }
  EXPECT_GE(Sample(text, "delaybridge_group_commit_seconds_count"), 1) << text;
  EXPECT_NE(text.find("delaybridge_build_info{version=\""), std::string::npos) << text;

  // What a Prometheus server would scrape, checked by its own tool.
  const PromtoolResult check = PromtoolCheck(text, dir_->File("scraped.txt"));
  EXPECT_TRUE(check.passed) << check.output;

  // Records due in an hour wait in the stores: the pending gauges of both partitions add up to
  // them, and none of the delivered ones is counted.
  constexpr int kLater = 40;
  for (int i = 0; i < kLater; ++i) {
    TestRecord later;
    later.topic = delay_topic_;
    later.key = "later-" + std::to_string(i);
    later.value = "due in an hour";
    later.headers.push_back({"x-delay", "3600000"});
    ASSERT_TRUE(producer_->Produce(later).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
  auto pending = [&](const std::string& t) {
    double sum = 0;
    for (int p = 0; p < 2; ++p) {
      sum += Sample(t, "delaybridge_records_pending{topic=\"" + delay_topic_ + "\",partition=\"" +
                           std::to_string(p) + "\"}");
    }
    return sum;
  };
  const std::string later = ScrapeUntil(
      [&](const std::string& t) {
        return Sample(t, "delaybridge_records_stored_total") == kRecords + kLater &&
               pending(t) == kLater;
      },
      seconds(20));
  EXPECT_EQ(pending(later), kLater) << later;
  EXPECT_EQ(Sample(later, "delaybridge_records_delivered_total"), kRecords) << later;

  ASSERT_NO_FATAL_FAILURE(StopBridge());
  EXPECT_EQ(bridge_->CountInLog("ERROR"), 0u) << LogTail();
}

TEST_F(BridgeHttpTest, NotReadyWhileTheBrokerIsDownAndReadyAgainAfter) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.delay_partitions = 2}));
  if (cluster_->external()) GTEST_SKIP() << "outages are simulated with the mock cluster only";
  ASSERT_NO_FATAL_FAILURE(StartBridge());
  port_ = MetricsPort();
  ASSERT_NE(port_, 0);
  ASSERT_EQ(ReadyzUntil(200, seconds(10)).status, 200);

  EXPECT_EQ(Get("/healthz").status, 200);
  ASSERT_TRUE(cluster_->SetBrokerDown(true).ok());
  const HttpResult down = ReadyzUntil(503, seconds(30));
  EXPECT_EQ(down.status, 503) << down.body;
  // Most often every connection is down; a slow run (TSan) may already have lost the group.
  std::cout << "readyz while the broker is down: " << down.body;
  EXPECT_FALSE(down.body.empty());

  ASSERT_TRUE(cluster_->SetBrokerDown(false).ok());
  const HttpResult back = ReadyzUntil(200, seconds(60));
  EXPECT_EQ(back.status, 200) << back.body << LogTail();
  ASSERT_NO_FATAL_FAILURE(StopBridge());
}

}  // namespace
}  // namespace delaybridge::testing
