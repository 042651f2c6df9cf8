// bench_storage, checksums: crc32c::Extend against one chain of crc32 instructions (the loop
// that a single-chain SSE4.2 implementation runs, the baseline here) and the portable tables,
// at the sizes the store checksums: an index entry's 28 bytes, a 100-byte record's 112, a
// 1 KiB record's 1036, a head-table slot's 28,800 bytes of cells. Each call continues from the
// checksum of the one before, as a record's checksum waits for its header's: what is measured is
// the time until the result is known, not how many independent checksums the CPU could overlap.
//
// Run (Release build): build-rel/bin/bench_storage --benchmark_filter=BM_Crc32c
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "storage/crc32c.h"
#include "storage/format.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace delaybridge::storage {
namespace {

enum class Implementation : int64_t { kPortable = 0, kOneChain = 1, kExtend = 2 };

#if defined(__x86_64__)
// The baseline: one crc32 per 8 bytes, each waiting for the one before; the bytes after the
// last whole word go through the implementation's own tail (under 8 bytes it runs no lanes).
__attribute__((target("sse4.2"))) uint32_t OneChain(uint32_t crc, const char* p, size_t n) {
  uint64_t state = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    state = _mm_crc32_u64(state, word);
  }
  const uint32_t words_crc = ~static_cast<uint32_t>(state);
  return n == 0 ? words_crc : crc32c::ExtendHardware(words_crc, p, n);
}
#endif

// Args: implementation (Implementation), bytes per checksum.
void BM_Crc32c(benchmark::State& state) {
  const auto implementation = static_cast<Implementation>(state.range(0));
  const std::string data(static_cast<size_t>(state.range(1)), 'c');
#if defined(__x86_64__)
  if (implementation != Implementation::kPortable && !crc32c::HardwareAccelerated()) {
    state.SkipWithError("no SSE4.2 and PCLMULQDQ on this CPU");
    return;
  }
#else
  if (implementation != Implementation::kPortable) {
    state.SkipWithError("x86-64 only");
    return;
  }
#endif
  uint32_t crc = 0;
  for (auto _ : state) {
    switch (implementation) {
      case Implementation::kPortable:
        crc = crc32c::ExtendPortable(crc, data.data(), data.size());
        break;
#if defined(__x86_64__)
      case Implementation::kOneChain:
        crc = OneChain(crc, data.data(), data.size());
        break;
#else
      case Implementation::kOneChain:
        break;  // skipped above
#endif
      case Implementation::kExtend:
        crc = crc32c::Extend(crc, data.data(), data.size());
        break;
    }
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
}
BENCHMARK(BM_Crc32c)
    ->ArgNames({"impl", "bytes"})
    ->ArgsProduct({{static_cast<int64_t>(Implementation::kPortable),
                    static_cast<int64_t>(Implementation::kOneChain),
                    static_cast<int64_t>(Implementation::kExtend)},
                   {28, 112, 1036, kHeadsSlotSize - kHeadsSlotHeaderSize}})
    ->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace delaybridge::storage
