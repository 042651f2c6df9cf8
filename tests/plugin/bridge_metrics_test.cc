// RenderMetrics: every family the operations guide lists, in the Prometheus text format as
// promtool (Debian's prometheus package) checks it; label values escaped; histograms
// cumulative, in seconds, with +Inf equal to the count.
#include "plugin/bridge_metrics.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "tests/support/promtool.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

struct Histograms {
  LatenessHistogram lateness_ms;
  LatenessHistogram group_commit_us;
};

BridgeMetrics Example(Histograms& h) {
  BridgeMetrics m;
  m.version = "1.2.3";
  m.consumed = 100;
  m.stored = 90;
  m.delivered = 42;
  m.rejected = 3;
  m.refused = 2;
  m.cancelled = 9;
  m.cancel_too_late = 4;
  m.cancel_unknown = 1;
  m.exactly_once = true;
  m.transactions = 7;
  m.in_memory = 5;
  PartitionMetrics p;
  p.id = {"delayed", 3};
  p.consumer_lag_records = 7;
  p.delivered_until_ms = 1'800'000'000'500;
  p.oldest_pending_ms = 1'800'000'001'000;
  p.records_pending = 12;
  p.store_bytes = 4096;
  m.partitions.push_back(p);
  PartitionMetrics odd;
  odd.id = {"a\"b\\c", 0};  // a topic name cannot hold these, but the writer must not care
  m.partitions.push_back(odd);
  for (int64_t ms : {-1, 3, 7, 120, 2'600, 400'000}) h.lateness_ms.Record(ms);
  for (int64_t us : {800, 2'000, 30'000}) h.group_commit_us.Record(us);
  m.lateness_ms = &h.lateness_ms;
  m.group_commit_us = &h.group_commit_us;
  return m;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST(BridgeMetricsTest, RendersEveryFamilyWithItsSamples) {
  Histograms h;
  const std::string text = RenderMetrics(Example(h));
  for (const char* line : {
           "delaybridge_build_info{version=\"1.2.3\"} 1",
           "# TYPE delaybridge_records_consumed_total counter",
           "delaybridge_records_consumed_total 100",
           "delaybridge_records_stored_total 90",
           "delaybridge_records_delivered_total 42",
           "delaybridge_records_dead_lettered_total{reason=\"rejected\"} 3",
           "delaybridge_records_dead_lettered_total{reason=\"refused\"} 2",
           "# TYPE delaybridge_cancels_total counter",
           "delaybridge_cancels_total{result=\"cancelled\"} 9",
           "delaybridge_cancels_total{result=\"too_late\"} 4",
           "delaybridge_cancels_total{result=\"unknown\"} 1",
           "delaybridge_delivery_retries_total 0",
           "delaybridge_delivery_queue_full_total 0",
           "delaybridge_transactions_total 7",
           "delaybridge_records_in_memory 5",
           "delaybridge_partitions_assigned 2",
           "delaybridge_consumer_lag_records{topic=\"delayed\",partition=\"3\"} 7",
           "delaybridge_delivered_until_seconds{topic=\"delayed\",partition=\"3\"} 1800000000.5",
           "delaybridge_oldest_pending_deliver_at_seconds{topic=\"delayed\",partition=\"3\"} "
           "1800000001",
           "delaybridge_records_pending{topic=\"delayed\",partition=\"3\"} 12",
           "delaybridge_store_bytes{topic=\"delayed\",partition=\"3\"} 4096",
           "delaybridge_store_bytes{topic=\"a\\\"b\\\\c\",partition=\"0\"} 0",
           "# TYPE delaybridge_delivery_lateness_seconds histogram",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"0.005\"} 2",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"0.01\"} 3",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"0.25\"} 4",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"5\"} 5",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"300\"} 5",
           "delaybridge_delivery_lateness_seconds_bucket{le=\"+Inf\"} 6",
           "delaybridge_delivery_lateness_seconds_count 6",
           "delaybridge_delivery_lateness_seconds_sum 402.73",  // the early sample counts as 0
           "delaybridge_group_commit_seconds_bucket{le=\"0.001\"} 1",
           "delaybridge_group_commit_seconds_bucket{le=\"0.0025\"} 2",
           "delaybridge_group_commit_seconds_bucket{le=\"0.025\"} 2",
           "delaybridge_group_commit_seconds_bucket{le=\"0.05\"} 3",
           "delaybridge_group_commit_seconds_count 3",
       }) {
    EXPECT_TRUE(Has(text, line)) << "missing: " << line << "\n" << text;
  }
  // Only one partition has a lag and a pending record: the other's series are absent.
  EXPECT_EQ(text.find("delaybridge_consumer_lag_records{topic=\"a"), std::string::npos);
  EXPECT_EQ(text.find("delaybridge_oldest_pending_deliver_at_seconds{topic=\"a"),
            std::string::npos);
  EXPECT_EQ(text.find("delaybridge_records_pending{topic=\"a"), std::string::npos);
}

TEST(BridgeMetricsTest, TransactionCountersOnlyWithExactlyOnce) {
  BridgeMetrics m;
  const std::string text = RenderMetrics(m);
  EXPECT_EQ(text.find("delaybridge_transactions_total"), std::string::npos);
  EXPECT_TRUE(Has(text, "delaybridge_delivery_lateness_seconds_count 0")) << text;
}

TEST(BridgeMetricsTest, PromtoolAcceptsTheOutput) {
  Histograms h;
  testing::TempDir dir("bridge_metrics_test");
  const testing::PromtoolResult check =
      testing::PromtoolCheck(RenderMetrics(Example(h)), dir.File("metrics.txt"));
  EXPECT_TRUE(check.passed) << check.output;
}

// packaging/grafana/delaybridge-dashboard.json queries only series the bridge exports.
TEST(BridgeMetricsTest, TheGrafanaDashboardQueriesOnlyExportedSeries) {
  std::ifstream in(std::string(DELAYBRIDGE_SOURCE_DIR) +
                   "/packaging/grafana/delaybridge-dashboard.json");
  ASSERT_TRUE(in.good());
  std::stringstream dashboard;
  dashboard << in.rdbuf();
  Histograms h;
  const std::string text = RenderMetrics(Example(h));
  const std::string json = dashboard.str();
  size_t names = 0;
  for (size_t at = json.find("delaybridge_"); at != std::string::npos;
       at = json.find("delaybridge_", at + 1)) {
    size_t end = at;
    while (end < json.size() &&
           (std::islower(static_cast<unsigned char>(json[end])) || json[end] == '_')) {
      ++end;
    }
    const std::string name = json.substr(at, end - at);
    const bool exported = text.find("\n" + name + " ") != std::string::npos ||
                          text.find("\n" + name + "{") != std::string::npos;
    EXPECT_TRUE(exported) << name << " is not exported";
    ++names;
  }
  EXPECT_GE(names, 10u);
}

}  // namespace
}  // namespace delaybridge::plugin
