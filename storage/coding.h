// Fixed-width little-endian encoding of integers, as used by every DelayLog file
// (docs/storage-format.md "Encoding"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace delaybridge::storage {

inline void EncodeFixed32(char* dst, uint32_t value) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

inline void EncodeFixed64(char* dst, uint64_t value) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

inline uint32_t DecodeFixed32(const char* src) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(src[i]);
  return value;
}

inline uint64_t DecodeFixed64(const char* src) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(src[i]);
  return value;
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
