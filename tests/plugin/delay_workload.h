// DelayWorkload: generates delayed records (both header styles, some with x-target-topic, some
// null keys and values) with a deterministic seed, remembers what each must look like when
// delivered, and checks a set of delivered records against it: exactly once, right topic,
// never early, key/value/headers intact, Java murmur2 partition, x-delay-source naming the
// record (once the test told where it landed). Records the test cancelled must not be delivered
// at all; those whose cancel may have come too late may be, once.
//
// Thread-safety: one test thread.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_clients.h"

namespace delaybridge::testing {

struct ExpectedDelivery {
  std::string topic;
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;  // without the x-delay ones, without x-delay-source
  int64_t deliver_at_ms = 0;
  int64_t produced_at_ms = 0;
  std::string source;  // the expected x-delay-source; empty: only its form is checked
  enum class Cancel { kNone, kCancelled, kMaybe } cancel = Cancel::kNone;
};

struct DeliveryCheck {
  size_t delivered = 0;  // distinct records seen
  std::vector<uint64_t> missing;
  std::map<uint64_t, size_t> duplicates;  // seq -> extra copies
  std::vector<std::string> errors;        // wrong topic/partition/content/early, unexpected
  size_t cancelled = 0;                   // cancelled (or maybe) and not delivered
  size_t delivered_despite_cancel = 0;    // maybe cancelled, delivered: the cancel came too late
  int64_t max_lateness_ms = 0;
  int64_t p50_lateness_ms = 0;
  int64_t p99_lateness_ms = 0;
  std::string Summary() const;
};

class DelayWorkload {
 public:
  DelayWorkload(uint32_t seed, std::string delay_topic, std::string target_topic,
                std::string alt_topic, int target_partitions)
      : rng_(seed),
        delay_topic_(std::move(delay_topic)),
        target_topic_(std::move(target_topic)),
        alt_topic_(std::move(alt_topic)),
        target_partitions_(target_partitions) {}

  // A record for the delay topic, due min_delay_ms to max_delay_ms after now_ms.
  TestRecord Next(int64_t now_ms, int64_t max_delay_ms, int64_t min_delay_ms = 0);
  const std::map<uint64_t, ExpectedDelivery>& expected() const { return expected_; }
  // The seq of a record this workload made (its "seq" header), or nullopt.
  static std::optional<uint64_t> SeqOf(const TestRecord& record);

  // Where record seq landed in the delay topic: its delivery must carry that x-delay-source.
  void SetSource(uint64_t seq, int32_t partition, int64_t offset);
  // A cancel of seq went out: certain, it must never be delivered; otherwise it may be, once.
  void Cancel(uint64_t seq, bool certain);

  // Checks delivered records (from the target and alt topics) against every record made.
  DeliveryCheck Check(const std::vector<TestRecord>& delivered) const;
  // Number of distinct records among delivered that this workload made.
  size_t DistinctDelivered(const std::vector<TestRecord>& delivered) const;

 private:
  std::mt19937_64 rng_;
  std::string delay_topic_, target_topic_, alt_topic_;
  int target_partitions_;
  uint64_t next_seq_ = 0;
  std::map<uint64_t, ExpectedDelivery> expected_;
};

}  // namespace delaybridge::testing
