// BridgeClusterFixture: the real-broker bridge fixture (tests/support/bridge_fixture.h) with
// several bridge instances in one consumer group, each with its own storage.dir (separate
// machines), a feeder thread offering load, and the checks the multi-instance tests share
// (nothing lost or early, duplicates only around a crash).
//
// Thread-safety: the fixture's members are used by the test's main thread only; the feeder
// thread touches only the feeder producer and the workload.
#pragma once

#include <atomic>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline constexpr int kPartitions = 6;
// How long before a crash a duplicate's first copy may have gone out: the progress commit
// interval (the checkpoint interval), a late record's second passing the checkpoint, and the
// acknowledgement latency of a loaded sanitizer build.
inline constexpr int64_t kDuplicateWindowMs = 3'000;

inline BridgeTestOptions ClusterTopology() {
  return {.delay_partitions = kPartitions, .target_partitions = 4, .alt_partitions = 2};
}

class BridgeClusterFixture : public RealBrokerBridgeFixture {
 protected:
  // Produces a probe to every delay partition and waits until all were delivered: every
  // partition has an owner that reads and delivers.
  void WaitAllPartitionsServed(seconds timeout) {
    const std::string round = std::to_string(++probe_rounds_);
    std::set<std::string> wanted;
    for (int p = 0; p < kPartitions; ++p) {
      TestRecord probe = ProbeRecord(delay_topic_, "r" + round + "p" + std::to_string(p));
      probe.partition = p;
      wanted.insert(*probe.value);
      ASSERT_TRUE(producer_->Produce(probe).ok());
    }
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());
    ReceiveUntil(
        [&] {
          for (const auto& r : received_) wanted.erase(r.value.value_or(""));
          return wanted.empty();
        },
        timeout);
    ASSERT_TRUE(wanted.empty()) << wanted.size() << " partitions not served within "
                                << timeout.count() << " s, e.g. " << *wanted.begin();
  }

  // The suite's bridge and instances b and c, each owning partitions and delivering.
  void StartThreeInstances() {
    SetUpBridge(ClusterTopology());
    ASSERT_FALSE(HasFatalFailure());
    StartBridgeAndWaitReady();
    ASSERT_FALSE(HasFatalFailure());
    StartInstance("b");
    StartInstance("c");
    ASSERT_NO_FATAL_FAILURE(WaitAssigned({"b", "c"}));
    ASSERT_NO_FATAL_FAILURE(WaitAllPartitionsServed(seconds(90)));
  }

  // Waits until each named instance owns at least one partition.
  void WaitAssigned(const std::vector<std::string>& names) {
    for (const auto& name : names) {
      ASSERT_TRUE(instances_.at(name)->WaitForLog("INFO  assigned " + delay_topic_, seconds(90)))
          << "instance " << name << " got no partition";
    }
  }

  // Produces n records at once.
  void ProduceBurst(DelayWorkload& workload, size_t n) {
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(producer_->Produce(workload.Next()).ok());
    ASSERT_TRUE(producer_->Flush(seconds(60)).ok());
  }

  // A producer thread offering records_per_25ms every 25 ms (1,000 records/s by default) until
  // StopFeeding or until the workload holds max_records.
  void StartFeeding(DelayWorkload& workload, size_t max_records = SIZE_MAX,
                    int records_per_25ms = 25) {
    auto producer = TestProducer::Create(cluster_->bootstrap());
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    feeder_producer_ = std::move(producer).value();
    feeder_ = std::thread([this, &workload, max_records, records_per_25ms] {
      while (!stop_feeding_ && feed_status_.ok() && workload.size() < max_records) {
        for (int i = 0; i < records_per_25ms && feed_status_.ok() && workload.size() < max_records;
             ++i) {
          feed_status_ = feeder_producer_->Produce(workload.Next());
          fed_ = workload.size();
        }
        feeder_producer_->raw().poll(0);
        std::this_thread::sleep_for(milliseconds(25));
      }
    });
  }
  // Waits until the feeder has produced max_records (StartFeeding), up to timeout.
  void WaitFed(size_t records, seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fed_ < records && std::chrono::steady_clock::now() < deadline) {
      ReceiveFor(milliseconds(200));
    }
    ASSERT_GE(fed_.load(), records) << "the feeder fell behind";
  }
  void StopFeeding() {
    stop_feeding_ = true;
    if (feeder_.joinable()) feeder_.join();
    ASSERT_TRUE(feed_status_.ok()) << feed_status_.ToString();
    ASSERT_TRUE(feeder_producer_->Flush(seconds(60)).ok());
  }

  // Waits for every workload record, then checks: none missing, none early, all intact.
  DeliveryReport AwaitAndCheck(const DelayWorkload& workload, seconds timeout) {
    ReceiveUntil([&] { return DistinctIdsReceived() == workload.size(); }, timeout);
    ReceiveFor(seconds(2));
    const DeliveryReport report = CheckReceived(workload);
    std::cout << ::testing::UnitTest::GetInstance()->current_test_info()->name() << ": "
              << report.ToString() << "\n";
    size_t shown = 0;
    for (const auto& [id, copies] : report.duplicated) {
      if (++shown > 5) break;
      std::cout << "  duplicate id " << id << " created " << workload.CreatedMs(id)
                << " deliver-at " << workload.DeliverAtMs(id) << ":";
      for (const auto& c : copies) std::cout << " " << c.timestamp_ms << "@p" << c.partition;
      std::cout << " source " << copies.front().Header("x-delay-source").value_or("") << "\n";
    }
    ExpectNoneLostEarlyOrAltered(report);
    return report;
  }

  int probe_rounds_ = 0;
  std::unique_ptr<TestProducer> feeder_producer_;
  std::thread feeder_;
  std::atomic<bool> stop_feeding_{false};
  std::atomic<size_t> fed_{0};  // records the feeder produced
  Status feed_status_;
};

}  // namespace delaybridge::testing
