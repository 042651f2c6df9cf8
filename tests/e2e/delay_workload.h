// DelayWorkload: generates delay-tagged records for the bridge's delay topic (a seeded mix of
// both header styles, optional x-target-topic, keyed and unkeyed, extra headers) and remembers
// what each must become on the way out. CheckDeliveries() then compares what came out of the
// target topics with that ledger: exactly-once, never early, right topic, Java partition for the
// key, key/value/headers intact, x-delay-source present (and naming the record, once the test
// told where it landed). Records the test cancelled must not come out at all; those whose
// cancel may have come too late may, once.
//
// Every record's value starts with "id=<n>|"; probe records (ProbeRecord) have values starting
// with "probe=" and are ignored by the check.
//
// Thread-safety: Next() and CheckDeliveries() may be called from different threads (a mutex
// guards the ledger).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/e2e/kafka_client.h"

namespace delaybridge::e2e {

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
  std::string value;
  Headers headers;  // as delivered, without x-delay-source
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
  size_t wrong_content = 0;  // key, value or headers differ, or x-delay-source missing/malformed
  size_t unknown = 0;        // not from this workload
  size_t cancelled = 0;      // cancelled (or maybe) and not delivered
  size_t delivered_though_cancelled = 0;  // certainly cancelled, yet delivered
  size_t delivered_despite_cancel = 0;    // maybe cancelled, delivered: the cancel was too late
  std::vector<int64_t> missing_ids;       // first few
  std::vector<std::string> problems;      // first few, human-readable
  LatenessSummary produce_lateness;       // target record timestamp - deliver_at
  LatenessSummary receive_lateness;       // time this test received it - deliver_at
  std::map<int64_t, std::vector<ConsumedRecord>> duplicated;  // id -> every copy received

  size_t missing() const { return expected - delivered; }
  std::string ToString() const;
};

class DelayWorkload {
 public:
  explicit DelayWorkload(WorkloadSpec spec);

  // The next record, with a delay drawn from [0, max_delay_ms]; deliver-at is computed from
  // the current time, so call it right before producing.
  OutgoingRecord Next();
  // A record with an explicit delay and header style, for targeted cases.
  OutgoingRecord NextWithDelay(int64_t delay_ms, bool deliver_at_style);
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
  DeliveryReport CheckDeliveries(const std::vector<ConsumedRecord>& received,
                                 const std::map<std::string, int32_t>& partitions) const;

 private:
  OutgoingRecord Build(int64_t id, int64_t delay_ms, int style, bool alt_target);

  const WorkloadSpec spec_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  std::vector<ExpectedRecord> ledger_;  // index = id
};

// A record with no delay headers and value "probe=<tag>": delivered at once by a running bridge.
OutgoingRecord ProbeRecord(const std::string& delay_topic, const std::string& tag);

// The id in a workload value ("id=<n>|..."), or nullopt for anything else.
std::optional<int64_t> WorkloadId(const std::string& value);

}  // namespace delaybridge::e2e
