// OutstandingPositions as the bridge's ingest thread drives it: each millisecond, records due
// 1-5 s later are added at random milliseconds of that window (records ingested within the
// preload horizon), and the records due now are removed (acknowledged), in a shuffled order.
// The trace of operations is built once; one iteration replays it on a fresh set, so the
// per-operation time includes the set's growth to its steady size (3,000 x per_ms positions:
// a record stays 3 s on average).
// After every 100 operations the benchmark may read `evicted_kib` KiB of a 64 MiB buffer,
// untimed: in the bridge the ingest thread takes a batch of records at a time, and between two
// batches other threads (the delivery thread, librdkafka's, the broker's on a shared machine)
// run on its core and push the set's memory out of the cache. 2048 KiB, the L2 cache of the
// Intel guest in docs/BENCHMARKS.md (the AMD guest's is 1 MiB), makes every batch start cold;
// without it the whole set stays in the L2 cache, as it does not in the bridge.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "plugin/outstanding_positions.h"

namespace delaybridge::plugin {
namespace {

struct Operation {
  RecordPosition position;
  bool add = false;
};

// per_ms: records added (and, once the window is full, removed) per millisecond.
std::vector<Operation> BridgeTrace(int64_t per_ms, int64_t window_ms, int64_t run_ms) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<RecordPosition>> due(static_cast<size_t>(run_ms + window_ms + 1));
  std::vector<uint32_t> next_ordinal_of_second(
      static_cast<size_t>((run_ms + window_ms) / 1000 + 1));
  std::vector<Operation> trace;
  for (int64_t now = 0; now < run_ms; ++now) {
    for (int64_t i = 0; i < per_ms; ++i) {
      const int64_t at = now + 1000 + static_cast<int64_t>(rng() % (window_ms - 1000));
      const RecordPosition p{at, next_ordinal_of_second[static_cast<size_t>(at / 1000)]++};
      due[static_cast<size_t>(at)].push_back(p);
      trace.push_back({p, true});
    }
    std::vector<RecordPosition>& now_due = due[static_cast<size_t>(now)];
    std::shuffle(now_due.begin(), now_due.end(), rng);
    for (const RecordPosition& p : now_due) trace.push_back({p, false});
  }
  return trace;
}

void BM_OutstandingPositionsBridgeTrace(benchmark::State& state) {
  const std::vector<Operation> trace = BridgeTrace(state.range(0), 5000, 20'000);
  const auto evicted_words = static_cast<size_t>(state.range(1)) * 1024 / sizeof(uint64_t);
  std::vector<uint64_t> other_memory((64u << 20) / sizeof(uint64_t), 1);
  size_t cursor = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    OutstandingPositions set;
    for (size_t i = 0; i < trace.size(); ++i) {
      const Operation& op = trace[i];
      const bool done = op.add ? set.Add(op.position) : set.Remove(op.position);
      benchmark::DoNotOptimize(done);
      if (evicted_words == 0 || i % 100 != 99) continue;
      state.PauseTiming();  // the other threads' time is not the set's
      for (size_t read = 0; read < evicted_words; read += 8) {  // a word of each cache line
        sum += other_memory[cursor];
        cursor = (cursor + 8) % other_memory.size();
      }
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(set.smallest());
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace.size()));
}
BENCHMARK(BM_OutstandingPositionsBridgeTrace)
    ->ArgNames({"per_ms", "evicted_kib"})
    ->ArgsProduct({{25, 100}, {0, 2048}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace delaybridge::plugin

BENCHMARK_MAIN();
