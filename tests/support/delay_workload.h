// DelayWorkload: generates delay-tagged records for the bridge's delay topic and remembers what
// each must become on the way out; CheckDeliveries() compares what came out of the target
// topics with that ledger. The one workload of the mock-cluster and the real-broker tests.
//
// The records: a seeded mix of header styles (x-delay, x-deliver-at, both at once where
// x-deliver-at must win, x-delay: 0, none), some redirected with x-target-topic, keyed and
// unkeyed, null (tombstone), empty and random values, user headers (a null one, a repeated
// name) with the control headers placed anywhere among them. Each carries its id in a
// "workload-id" header.
//
// The check: each record exactly once (duplicates are reported for the caller to judge), never
// early (by the target record's timestamp or by when the test received it), on the right topic,
// in the partition a Java producer picks for its key, key/value/headers intact, and
// x-delay-source the last header, once, naming a delay-topic record no other delivery names
// (the very one, once the test told where it landed). Records the test cancelled must not come
// out at all; those whose cancel may have come too late may, once. Probe records (ProbeRecord)
// are ignored.
//
// Thread-safety: every method may be called from any thread (a mutex guards the ledger), so a
// feeder thread can call Next() while the test thread checks.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_record.h"

namespace delaybridge::testing {

struct WorkloadSpec {
  std::string delay_topic;
  std::string default_target;  // the route's target
  std::string alt_target;      // allowed via x-target-topic; empty: never set the header
  int64_t max_delay_ms = 30'000;
  // Above 0: no record is due sooner (and none has the deliver-now header styles).
  int64_t min_delay_ms = 0;
  int key_space = 5'000;  // distinct keys
  uint64_t seed = 1;
};

struct ExpectedRecord {
  std::string topic;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;  // as delivered, without x-delay-source
  int64_t deliver_at_ms = 0;
  int64_t created_ms = 0;  // when the test produced it to the delay topic
  std::string source;      // the expected x-delay-source; empty: only its form is checked
  enum class Cancel { kNone, kCancelled, kMaybe } cancel = Cancel::kNone;
};

struct LatenessSummary {
  size_t count = 0;
  int64_t p50_ms = 0;
  int64_t p99_ms = 0;
  int64_t max_ms = 0;
  std::string ToString() const;
};

// Percentiles of the given samples (sorted in place).
LatenessSummary Summarize(std::vector<int64_t>& samples_ms);

struct DeliveryReport {
  size_t expected = 0;    // records that must be delivered, or were (cancelled ones not)
  size_t delivered = 0;   // distinct ids received
  size_t duplicates = 0;  // copies beyond the first
  size_t early = 0;       // produced or received before deliver_at
  size_t wrong_topic = 0;
  size_t wrong_partition = 0;
  // Key, value or headers differ, or x-delay-source missing, malformed, not last, not the
  // record's, or naming the source of another record.
  size_t wrong_content = 0;
  size_t unknown = 0;                     // not from this workload
  size_t cancelled = 0;                   // cancelled (or maybe) and not delivered
  size_t delivered_though_cancelled = 0;  // certainly cancelled, yet delivered
  size_t delivered_despite_cancel = 0;    // maybe cancelled, delivered: the cancel was too late
  std::vector<int64_t> missing_ids;       // first few
  std::vector<std::string> problems;      // first few, human-readable
  LatenessSummary produce_lateness;       // target record timestamp - deliver_at
  LatenessSummary receive_lateness;       // time this test received it - deliver_at
  std::map<int64_t, std::vector<TestRecord>> duplicated;  // id -> every copy received

  size_t missing() const { return expected - delivered; }
  std::string ToString() const;
};

class DelayWorkload {
 public:
  explicit DelayWorkload(WorkloadSpec spec);

  // The next record, with a delay drawn from [min_delay_ms, max_delay_ms]; deliver-at is
  // computed from the current time, so call it right before producing.
  TestRecord Next();
  // A record with an explicit delay and header style, for targeted cases.
  TestRecord NextWithDelay(int64_t delay_ms, bool deliver_at_style);
  size_t size() const;
  // The deliver-at the ledger holds for a record id (which must exist).
  int64_t DeliverAtMs(int64_t id) const;
  // When the record was handed to the producer for the delay topic.
  int64_t CreatedMs(int64_t id) const;
  // Where record id landed in the delay topic: its delivery must carry that x-delay-source.
  void SetSource(int64_t id, int32_t partition, int64_t offset);
  // A cancel of id went out: certain, it must never be delivered; otherwise it may be, once.
  void Cancel(int64_t id, bool certain);

  // partitions: partition count of each target topic.
  DeliveryReport CheckDeliveries(const std::vector<TestRecord>& received,
                                 const std::map<std::string, int32_t>& partitions) const;

 private:
  TestRecord Build(int64_t id, int64_t delay_ms, int style, bool alt_target);

  const WorkloadSpec spec_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  std::vector<ExpectedRecord> ledger_;  // index = id
};

// A record with no delay headers and value "probe=<tag>": delivered at once by a running bridge.
TestRecord ProbeRecord(const std::string& delay_topic, const std::string& tag);

// The id of a workload record (its "workload-id" header), or nullopt for anything else.
std::optional<int64_t> WorkloadId(const TestRecord& record);

}  // namespace delaybridge::testing
