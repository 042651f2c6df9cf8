#include "storage/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

namespace delaybridge::storage::crc32c {
namespace {

// Reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// tables[k][b] is the CRC contribution of byte b followed by k zero bytes: slice-by-8
// processes eight input bytes with eight independent look-ups.
constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    tables[0][b] = crc;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) {
      uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xff];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t state = ~crc;
  while (n >= 8) {
    uint64_t word = LoadLittleEndian64(p) ^ state;
    state = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^
            kTables[5][(word >> 16) & 0xff] ^ kTables[4][(word >> 24) & 0xff] ^
            kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
            kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    state = (state >> 8) ^ kTables[0][(state ^ *p++) & 0xff];
    --n;
  }
  return ~state;
}

#if defined(__x86_64__)
namespace {

// x^n mod P in the reflected representation (bit 31 holds x^0), so that multiplying by x is a
// shift right, folding P back in when x^31 shifts out. Used at compile time.
constexpr uint32_t XPowModP(uint64_t n) {
  uint32_t value = 0x80000000u;
  for (uint64_t i = 0; i < n; ++i) value = (value & 1) ? (value >> 1) ^ kPolynomial : value >> 1;
  return value;
}

// The crc32 register after kBytes zero bytes more: one carry-less multiply by x^(8 kBytes) mod P
// and one crc32 of the product, instead of kBytes / 8 crc32 steps. crc32 of a 64-bit word
// multiplies by x^32, and the multiply of two reflected operands leaves its product one bit
// short of the word, hence the constant's 8 kBytes - 33.
template <size_t kBytes>
__attribute__((target("sse4.2,pclmul"))) inline uint64_t AfterZeros(uint64_t state) {
  constexpr uint32_t kFactor = XPowModP(8 * kBytes - 33);
  const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(state)),
                                               _mm_cvtsi32_si128(static_cast<int>(kFactor)), 0);
  return _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(product)));
}

// Consumes blocks of three lanes of kLaneBytes each while *n holds one: a crc32 chain per lane,
// the lanes after the first starting from zero, merged by moving the first two chains past the
// lanes after them (AfterZeros; CRC32C is linear, so the three xor together). crc32 takes three
// cycles and the CPU starts one per cycle: three chains take the time of one.
template <size_t kLaneBytes>
__attribute__((target("sse4.2,pclmul"))) inline void ExtendInLanes(uint64_t* state,
                                                                   const uint8_t** p, size_t* n) {
  while (*n >= 3 * kLaneBytes) {
    const uint8_t* lane = *p;
    uint64_t first = *state;
    uint64_t second = 0;
    uint64_t third = 0;
    for (size_t i = 0; i < kLaneBytes; i += 8) {
      uint64_t words[3];
      std::memcpy(&words[0], lane + i, 8);
      std::memcpy(&words[1], lane + kLaneBytes + i, 8);
      std::memcpy(&words[2], lane + 2 * kLaneBytes + i, 8);
      first = _mm_crc32_u64(first, words[0]);
      second = _mm_crc32_u64(second, words[1]);
      third = _mm_crc32_u64(third, words[2]);
    }
    *state = AfterZeros<2 * kLaneBytes>(first) ^ AfterZeros<kLaneBytes>(second) ^ third;
    *p += 3 * kLaneBytes;
    *n -= 3 * kLaneBytes;
  }
}

}  // namespace

__attribute__((target("sse4.2,pclmul"))) uint32_t ExtendHardware(uint32_t crc, const void* data,
                                                                 size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t state = ~crc;
  // Long lanes first (fewer merges), then short ones, so that a 100-byte record runs in lanes
  // too (docs/BENCHMARKS.md "Checksums: three lanes, and fields from registers").
  ExtendInLanes<256>(&state, &p, &n);
  ExtendInLanes<32>(&state, &p, &n);
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    state = _mm_crc32_u64(state, word);
    p += 8;
    n -= 8;
  }
  // The tail in at most three steps, not one per byte: each step waits for the one before, so
  // a record's 4-byte tails cost one step instead of four.
  auto state32 = static_cast<uint32_t>(state);
  if (n >= 4) {
    uint32_t word;
    std::memcpy(&word, p, 4);
    state32 = _mm_crc32_u32(state32, word);
    p += 4;
    n -= 4;
  }
  if (n >= 2) {
    uint16_t half;
    std::memcpy(&half, p, 2);
    state32 = _mm_crc32_u16(state32, half);
    p += 2;
    n -= 2;
  }
  if (n > 0) state32 = _mm_crc32_u8(state32, *p);
  return ~state32;
}
#endif

}  // namespace delaybridge::storage::crc32c
