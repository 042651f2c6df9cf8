// CRC32C (Castagnoli): the checksum of every DelayLog record, index entry, head table slot and
// checkpoint (docs/storage-format.md "Encoding"). Uses the SSE4.2 crc32 instruction, in three
// chains at once merged by carry-less multiplies (PCLMULQDQ), when the CPU has both (their
// feature bits tested on every call: one load), slice-by-8 tables otherwise; both give the same
// values. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "storage/coding.h"

namespace delaybridge::storage::crc32c {

// The portable slice-by-8 implementation, exposed so tests can compare both paths.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);

#if defined(__x86_64__)
// The SSE4.2 and PCLMULQDQ implementation; only valid when HardwareAccelerated().
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n);
#endif

// True when Extend uses ExtendHardware on this machine: a test of the flags that the compiler's
// runtime sets from CPUID at program start. Intel CPUs have both instructions since Westmere
// (2010); one with SSE4.2 only (Nehalem), or a virtual CPU that hides PCLMULQDQ, uses the
// tables, 5-13x slower (docs/BENCHMARKS.md "Checksums: three lanes, and fields from
// registers").
inline bool HardwareAccelerated() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
#else
  return false;
#endif
}

// Returns the CRC32C of data[0, n) continued from crc, the CRC32C of some earlier bytes:
// Extend(Value(a), b) == Value(a followed by b). Inline, so that a checksum costs one call, not
// a call to a dispatcher that calls the implementation.
inline uint32_t Extend(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  if (HardwareAccelerated()) [[likely]] {
    return ExtendHardware(crc, data, n);
  }
#endif
  return ExtendPortable(crc, data, n);
}

// CRC32C of data[0, n).
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// Extend over the 4 or 8 little-endian bytes of value (EncodeFixed32 / EncodeFixed64), taken
// from a register: with ExtendHardware's instructions, one crc32 instruction inline, no call
// and no round trip through memory. Every append checksums its record header's fields and its
// index entry's this way.
// The instruction is written out because its intrinsic needs the sse4.2 target, and a function
// of that target cannot be inlined into code compiled without it.
inline uint32_t ExtendLittleEndian32(uint32_t crc, uint32_t value) {
#if defined(__x86_64__)
  if (HardwareAccelerated()) [[likely]] {
    uint32_t state = ~crc;
    __asm__("crc32l %1, %0" : "+r"(state) : "rm"(value));
    return ~state;
  }
#endif
  char bytes[4];
  EncodeFixed32(bytes, value);
  return ExtendPortable(crc, bytes, sizeof(bytes));
}

inline uint32_t ExtendLittleEndian64(uint32_t crc, uint64_t value) {
#if defined(__x86_64__)
  if (HardwareAccelerated()) [[likely]] {
    uint64_t state = ~crc;
    __asm__("crc32q %1, %0" : "+r"(state) : "rm"(value));
    return ~static_cast<uint32_t>(state);
  }
#endif
  char bytes[8];
  EncodeFixed64(bytes, value);
  return ExtendPortable(crc, bytes, sizeof(bytes));
}

}  // namespace delaybridge::storage::crc32c
