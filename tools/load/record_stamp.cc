#include "tools/load/record_stamp.h"

#include <cstring>

namespace delaybridge::load {

namespace {

constexpr char kMagic[4] = {'D', 'B', 'L', '1'};

void PutU64(uint64_t value, std::byte* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

uint64_t GetU64(const std::byte* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

}  // namespace

void EncodeRecordStamp(const RecordStamp& stamp, std::span<std::byte> out) {
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  PutU64(stamp.run_id, out.data() + 4);
  PutU64(stamp.record_id, out.data() + 12);
  PutU64(static_cast<uint64_t>(stamp.deliver_at_ms), out.data() + 20);
}

std::optional<RecordStamp> DecodeRecordStamp(std::span<const std::byte> value) {
  if (value.size() < kRecordStampBytes) return std::nullopt;
  if (std::memcmp(value.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  RecordStamp stamp;
  stamp.run_id = GetU64(value.data() + 4);
  stamp.record_id = GetU64(value.data() + 12);
  stamp.deliver_at_ms = static_cast<int64_t>(GetU64(value.data() + 20));
  return stamp;
}

}  // namespace delaybridge::load
