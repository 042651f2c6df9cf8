// BridgeClusterFixture: the real-broker bridge fixture (tests/support/bridge_fixture.h) with
// several bridge instances in one consumer group, each with its own storage.dir (separate
// machines), a feeder thread offering load, and the checks the multi-instance tests share
// (nothing lost or early, duplicates only around a crash or a hand-over without a commit).
//
// Thread-safety: the fixture's members are used by the test's main thread only; the feeder
// thread touches only the feeder producer and the workload.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/bridge_fixture.h"
#include "tests/support/bridge_log.h"

namespace delaybridge::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline constexpr int kPartitions = 6;
// How long before a crash (or a hand-over without a commit) a duplicate's first copy may have gone
// out: the progress commit interval (the checkpoint interval), a late record's second passing the
// checkpoint, and the acknowledgement latency of a loaded sanitizer build.
inline constexpr int64_t kDuplicateWindowMs = 3'000;

inline BridgeTestOptions ClusterTopology() {
  return {.delay_partitions = kPartitions, .target_partitions = 4, .alt_partitions = 2};
}

// The delay-topic partition a delivered record came from, "<topic>-<partition>", from its
// x-delay-source header ("<topic>/<partition>/<offset>").
inline std::string SourcePartition(const TestRecord& record) {
  const std::string source = record.Header("x-delay-source").value_or("");
  const size_t first = source.find('/');
  const size_t second = source.find('/', first + 1);
  if (first == std::string::npos || second == std::string::npos) return source;
  return source.substr(0, first) + "-" + source.substr(first + 1, second - first - 1);
}

class BridgeClusterFixture : public RealBrokerBridgeFixture {
 protected:
  // The suite's bridge and every instance started, for reading their logs.
  std::vector<const BridgeProcess*> Processes() const {
    std::vector<const BridgeProcess*> processes;
    if (bridge_) processes.push_back(bridge_.get());
    for (const auto& [name, instance] : instances_) processes.push_back(instance.get());
    return processes;
  }

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

  // Every hand-over without a commit any instance logged (tests/support/bridge_log.h).
  std::vector<UncommittedHandOver> UncommittedHandOvers() const {
    std::vector<UncommittedHandOver> hand_overs;
    for (const BridgeProcess* process : Processes()) {
      for (UncommittedHandOver& h : UncommittedHandOversIn(process->Log())) {
        hand_overs.push_back(std::move(h));
      }
    }
    return hand_overs;
  }

  // What a crash at kill_ms and the hand-overs without a commit allow: each duplicate's earliest
  // copy went out at most kDuplicateWindowMs before the crash, or before its source partition was
  // given up without its progress committed.
  void ExpectDuplicatesOnlyAroundHandOvers(const DeliveryReport& report, int64_t kill_ms) {
    const std::vector<UncommittedHandOver> hand_overs = UncommittedHandOvers();
    std::cout << hand_overs.size() << " hand-over(s) without a commit logged\n";
    size_t explained_by_hand_over = 0;
    for (const auto& [id, copies] : report.duplicated) {
      int64_t earliest_ms = copies.front().timestamp_ms;
      for (const TestRecord& copy : copies) earliest_ms = std::min(earliest_ms, copy.timestamp_ms);
      const auto before = [earliest_ms](int64_t t) {
        return earliest_ms <= t && earliest_ms >= t - kDuplicateWindowMs;
      };
      if (before(kill_ms)) continue;
      const std::string partition = SourcePartition(copies.front());
      const bool handed_over =
          std::any_of(hand_overs.begin(), hand_overs.end(), [&](const UncommittedHandOver& h) {
            return h.partitions.count(partition) && before(h.at_ms);
          });
      explained_by_hand_over += handed_over;
      EXPECT_TRUE(handed_over) << "id " << id << " of " << partition << " first delivered at "
                               << earliest_ms << ", not within " << kDuplicateWindowMs
                               << " ms before the crash at " << kill_ms
                               << " or before its partition was given up without a commit";
    }
    std::cout << explained_by_hand_over
              << " duplicate(s) first delivered before a hand-over without a commit\n";
  }

  int probe_rounds_ = 0;
  std::unique_ptr<TestProducer> feeder_producer_;
  std::thread feeder_;
  std::atomic<bool> stop_feeding_{false};
  std::atomic<size_t> fed_{0};  // records the feeder produced
  Status feed_status_;
};

}  // namespace delaybridge::testing
