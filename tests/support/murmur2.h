// Java-compatible murmur2: the reference for which partition a key must land in. It is a
// line-by-line port of org.apache.kafka.common.utils.Utils.murmur2 and of the default
// partitioner's toPositive(murmur2(key)) % partitions, checked against Kafka's own test
// vectors in tests/plugin/murmur2_test.cc. Used by tests to check the bridge's partitioning.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace delaybridge::testing {

// Utils.murmur2(byte[]) as a signed 32-bit value, exactly as Java returns it.
int32_t JavaMurmur2(std::string_view data);

// The partition Java's default partitioner (and librdkafka's murmur2_random) picks for a
// non-null key.
int32_t JavaPartitionForKey(std::string_view key, int32_t partitions);

}  // namespace delaybridge::testing
