#include "tests/e2e/java_partitioner.h"

namespace delaybridge::e2e {

int32_t KafkaMurmur2(std::string_view key) {
  const auto* data = reinterpret_cast<const uint8_t*>(key.data());
  const uint32_t length = static_cast<uint32_t>(key.size());
  constexpr uint32_t kSeed = 0x9747b28c;
  constexpr uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;

  uint32_t h = kSeed ^ length;
  const uint32_t words = length / 4;
  for (uint32_t i = 0; i < words; ++i) {
    const uint32_t i4 = i * 4;
    uint32_t k = uint32_t{data[i4]} | uint32_t{data[i4 + 1]} << 8 | uint32_t{data[i4 + 2]} << 16 |
                 uint32_t{data[i4 + 3]} << 24;
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }
  const uint32_t tail = length & ~3u;
  switch (length % 4) {
    case 3:
      h ^= uint32_t{data[tail + 2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= uint32_t{data[tail + 1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= uint32_t{data[tail]};
      h *= kM;
  }
  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t JavaPartitionForKey(std::string_view key, int32_t partitions) {
  const uint32_t positive = static_cast<uint32_t>(KafkaMurmur2(key)) & 0x7fffffffu;
  return static_cast<int32_t>(positive % static_cast<uint32_t>(partitions));
}

}  // namespace delaybridge::e2e
