// BridgeCancelFixture: the cancel (x-delay-cancel) runs of both suites, on the cluster its
// ClusterKind names. A run produces CancelTestShape's records in flushed batches (the
// acknowledgements tell where each landed, which its cancel names), cancels a seeded share of
// them at random moments before they fall due and a few more once their delivery was seen (too
// late), sends cancels naming cancel records (unknown) and malformed cancels (dead-lettered with
// the reason), and checks that no record cancelled in time is delivered, every other one is,
// never early and intact, each malformed cancel is dead-lettered, and the bridge's stats line
// counts cancelled, cancel_too_late and cancel_unknown exactly. RunWithKill does the same with a
// kill -9 while most records are pending: cancels survive it.
//
// Thread-safety: the fixture's members are used by the test's main thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/bridge_fixture.h"
#include "tests/support/cancel_plan.h"

namespace delaybridge::testing {

struct CancelRun {
  uint64_t seed = 1;
  BridgeTestOptions options = {};
  // delivery.guarantee: exactly_once (appended to options.extra_yaml): a read_committed reader
  // sees no duplicate and each malformed cancel's dead letter once, even after a crash.
  bool exactly_once = false;
  // RunWithKill: a duplicate's first copy went out at most this long before the kill.
  int64_t duplicate_window_ms = 2'000;
};

class BridgeCancelFixture : public BridgeFixture {
 protected:
  explicit BridgeCancelFixture(ClusterKind cluster_kind = ClusterKind::kMockUnlessEnvironment)
      : BridgeFixture(cluster_kind) {}

  // No crash: besides the checks above, no record is delivered twice.
  void RunWithoutCrash(const CancelRun& run);
  // A kill -9 once every record was consumed and committed, while most are pending; the
  // counters are not compared (the restarted bridge counts from zero). A duplicate's first copy
  // went out shortly before the kill, and no record comes more than three times.
  void RunWithKill(const CancelRun& run);

 private:
  using CancelShape = CancelTestShape;

  void SetUpRun(const CancelRun& run);
  void ProduceRecords();
  // Cancels naming cancel records, then malformed ones, to partition 1.
  void SendOddCancels();
  // Sends the cancels whose moment has come, receives for `poll`, and cancels the records
  // planned to be cancelled late whose delivery just arrived.
  void Step(std::chrono::milliseconds poll);
  void SendCancelOf(uint64_t id, const std::string& tag);
  void SendCancel(int32_t partition, std::optional<std::string> id, const std::string& tag);
  // Steps until every cancel went out and every record not cancelled in time was delivered (or
  // the deadline), then 3 s more, so that a late or duplicate delivery shows up.
  void StepUntilSettled();
  // A kill -9, then a restart while cancels keep going out; returns the kill's time and when
  // every partition was assigned again.
  std::pair<int64_t, int64_t> KillAndRestart();
  // Marks the cancelled records in the workload, then checks the deliveries and the dead
  // letters (each malformed cancel once, or at least once when !dead_letters_once).
  DeliveryReport CheckDeliveries(bool dead_letters_once);
  // Shows what became of the records cancelled in time that fell due while the bridge was down,
  // by when their cancel went out: what the kill put to the test.
  void ShowCancelsDueWhileDown(int64_t kill_ms, int64_t back_ms) const;
  // Stops the bridge (SIGTERM, exit 0): its last stats line comes after everything settled.
  std::map<std::string, int64_t> StopAndReadStats();
  bool Seen(uint64_t id) const { return seen_.contains(static_cast<int64_t>(id)); }

  std::unique_ptr<DelayWorkload> workload_;
  std::unique_ptr<CancelPlan> plan_;
  std::vector<ProducedAt> landed_;        // by workload id
  std::deque<ProducedAt> cancel_landed_;  // stable addresses for the delivery reports
  std::set<int64_t> seen_;                // workload ids delivered
  size_t looked_at_ = 0;                  // received_ up to here was looked at
  std::vector<MalformedCancel> malformed_;
  int64_t produced_ms_ = 0;
};

}  // namespace delaybridge::testing
