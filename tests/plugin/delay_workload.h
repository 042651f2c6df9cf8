// DelayWorkload: generates delayed records (both header styles, some with x-target-topic, some
// null keys and values) with a deterministic seed, remembers what each must look like when
// delivered, and checks a set of delivered records against it: exactly once, right topic,
// never early, key/value/headers intact, Java murmur2 partition.
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
};

struct DeliveryCheck {
  size_t delivered = 0;  // distinct records seen
  std::vector<uint64_t> missing;
  std::map<uint64_t, size_t> duplicates;  // seq -> extra copies
  std::vector<std::string> errors;        // wrong topic/partition/content/early, unexpected
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

  // A record for the delay topic, due max_delay_ms or less after now_ms.
  TestRecord Next(int64_t now_ms, int64_t max_delay_ms);
  const std::map<uint64_t, ExpectedDelivery>& expected() const { return expected_; }

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
