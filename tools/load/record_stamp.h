// RecordStamp: what delaybridge-load writes at the start of every record value so that the
// consumer side can tell which record arrived and when it was meant to arrive, whatever
// happened to the headers on the way.
//
// Layout (28 bytes, little-endian), followed by filler up to --payload-bytes:
//   0  magic "DBL1"
//   4  run_id         u64  random per run; records of other runs are counted as foreign
//   12 record_id      u64  0, 1, 2, ... in produce order (warm-up: kWarmupIdBit | i)
//   20 deliver_at_ms  i64  intended delivery time, Unix epoch milliseconds
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace delaybridge::load {

struct RecordStamp {
  uint64_t run_id = 0;
  uint64_t record_id = 0;
  int64_t deliver_at_ms = 0;
};

inline constexpr size_t kRecordStampBytes = 28;

// Set in the record_id of warm-up records, which prime the pipeline before measuring and are
// not part of the tally.
inline constexpr uint64_t kWarmupIdBit = uint64_t{1} << 63;

// Writes the stamp into the first kRecordStampBytes of `out` (which must be at least that long).
void EncodeRecordStamp(const RecordStamp& stamp, std::span<std::byte> out);

// Reads a stamp from the start of a record value; nullopt when the value is too short or does
// not start with the magic (a record that delaybridge-load did not write).
std::optional<RecordStamp> DecodeRecordStamp(std::span<const std::byte> value);

}  // namespace delaybridge::load
