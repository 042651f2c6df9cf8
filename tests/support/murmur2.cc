#include "tests/support/murmur2.h"

namespace delaybridge::testing {

int32_t JavaMurmur2(std::string_view data) {
  // Java's int arithmetic wraps; uint32_t arithmetic wraps the same way, and >>> is an
  // unsigned shift.
  const uint32_t length = static_cast<uint32_t>(data.size());
  const uint32_t seed = 0x9747b28c;
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  uint32_t h = seed ^ length;
  const auto byte = [&data](size_t i) {
    return static_cast<uint32_t>(static_cast<uint8_t>(data[i]));
  };
  const uint32_t length4 = length / 4;
  for (uint32_t i = 0; i < length4; ++i) {
    const uint32_t i4 = i * 4;
    uint32_t k = byte(i4) + (byte(i4 + 1) << 8) + (byte(i4 + 2) << 16) + (byte(i4 + 3) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const uint32_t tail = length & ~3u;
  switch (length % 4) {
    case 3:
      h ^= byte(tail + 2) << 16;
      [[fallthrough]];
    case 2:
      h ^= byte(tail + 1) << 8;
      [[fallthrough]];
    case 1:
      h ^= byte(tail);
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t JavaPartitionForKey(std::string_view key, int32_t partitions) {
  const int32_t positive = JavaMurmur2(key) & 0x7fffffff;  // Utils.toPositive
  return positive % partitions;
}

}  // namespace delaybridge::testing
