// The partition Apache Kafka's Java producer picks for a keyed record: murmur2 of the key bytes
// (Kafka's variant, seed 0x9747b28c), sign bit cleared, modulo the partition count. The bridge
// must deliver to this partition so per-key ordering holds alongside Java producers; the tests
// check it against this independent reference rather than against librdkafka.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace delaybridge::e2e {

// Kafka's Utils.murmur2 as a signed 32-bit value (the form Kafka's own tests list).
int32_t KafkaMurmur2(std::string_view key);

// Utils.toPositive(murmur2(key)) % partitions.
int32_t JavaPartitionForKey(std::string_view key, int32_t partitions);

}  // namespace delaybridge::e2e
