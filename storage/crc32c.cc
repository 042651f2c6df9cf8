#include "storage/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
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
__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const void* data,
                                                          size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t state = ~crc;
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
