// Fixed-width little-endian encoding of integers, as used by every DelayLog file
// (docs/storage-format.md "Encoding"). Pure functions; thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace delaybridge::storage {

// One store or load of the whole value (its bytes swapped first on a big-endian host). A loop
// over the bytes is not always merged into one by GCC, and a wide load of bytes written by
// several narrow stores waits for them to reach the cache (no store forwarding): every append
// encodes a header and an entry and then reads them back, as a copy or a checksum.
inline uint32_t LittleEndian32(uint32_t value) {
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap32(value);
  return value;
}

inline uint64_t LittleEndian64(uint64_t value) {
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap64(value);
  return value;
}

inline void EncodeFixed32(char* dst, uint32_t value) {
  value = LittleEndian32(value);
  std::memcpy(dst, &value, sizeof(value));
}

inline void EncodeFixed64(char* dst, uint64_t value) {
  value = LittleEndian64(value);
  std::memcpy(dst, &value, sizeof(value));
}

inline uint32_t DecodeFixed32(const char* src) {
  uint32_t value;
  std::memcpy(&value, src, sizeof(value));
  return LittleEndian32(value);
}

inline uint64_t DecodeFixed64(const char* src) {
  uint64_t value;
  std::memcpy(&value, src, sizeof(value));
  return LittleEndian64(value);
}

inline void PutFixed32(std::string* dst, uint32_t value) {
  char buf[4];
  EncodeFixed32(buf, value);
  dst->append(buf, sizeof(buf));
}

inline void PutFixed64(std::string* dst, uint64_t value) {
  char buf[8];
  EncodeFixed64(buf, value);
  dst->append(buf, sizeof(buf));
}

}  // namespace delaybridge::storage
