// Benchmarks of TimingWheel against three other timer queues, side by side at 1k, 100k, 1M and
// 10M pending timers: a std heap with lazy cancel, Boost.Asio's timer queue, and a Netty-style
// hashed wheel. Plus the idle cost of advancing one hour with 1M timers pending and none due.
//
//   cmake -S . -B build-core-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-core-rel --target bench_core
//   build-core-rel/bin/bench_core --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Results and the machine they came from: docs/BENCHMARKS.md, section "core/".
//
// One iteration of ScheduleCancel schedules a timer (deadline 1 ms to 24 h ahead) and cancels
// it. One iteration of ScheduleExpire schedules a timer 100 ms ahead, moves time by 1 ms and
// expires the one timer that became due; in both, the N pending timers sit 30 to 365 days
// ahead. ExpireInTurn keeps N timers one per millisecond and expires them all in turn.
// SteadyStream is the bridge's load: R timers a millisecond, each due 1 to 10 s after it was
// scheduled, time moved 1 ms at a time; besides the time per timer it reports the longest single
// step (advance() and that millisecond's schedule() calls), the delay a step adds to the timers
// due after it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>

#include "bench/core/asio_timer_queue.h"
#include "bench/core/hashed_wheel_timer.h"
#include "bench/core/heap_timer_queue.h"
#include "core/timing_wheel.h"

namespace delaybridge::bench {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr int64_t kExpireDelayMs = 100;
constexpr size_t kOffsets = 4096;  // a power of two, indexed with a mask

template <typename Queue>
std::unique_ptr<Queue> MakeQueue();
template <>
std::unique_ptr<TimingWheel> MakeQueue() {
  return std::make_unique<TimingWheel>(1, 0);
}
template <>
std::unique_ptr<HeapTimerQueue> MakeQueue() {
  return std::make_unique<HeapTimerQueue>();
}
template <>
std::unique_ptr<AsioTimerQueue> MakeQueue() {
  return std::make_unique<AsioTimerQueue>();
}
template <>
std::unique_ptr<HashedWheelTimer> MakeQueue() {
  return std::make_unique<HashedWheelTimer>(1, 0);
}

// Deadline offsets drawn once, so the timed loops do not run a random generator.
std::array<int64_t, kOffsets> RandomOffsetsMs(int64_t min_ms, int64_t max_ms, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> offset_ms(min_ms, max_ms);
  std::array<int64_t, kOffsets> offsets;
  for (int64_t& offset : offsets) offset = offset_ms(rng);
  return offsets;
}

// How the prepared timers are spread: far ahead (none fires during a benchmark), or one per
// millisecond over the next `pending` milliseconds (every one fires in turn).
enum class Layout { kFarAhead, kOnePerMillisecond };

// A queue holding `pending` timers in a layout. Building 10M timers takes seconds, so the
// last prepared queue is kept for the next run of the same benchmark on the same queue and
// size (each run leaves it in its layout; repetitions reuse it). Each benchmark gets its own
// queue: a lazily cancelled heap carries stale items out of ScheduleCancel that would slow
// down the next benchmark. Only one is kept alive, so 10M-timer queues never pile up.
template <typename Queue, Layout kLayout>
struct PreparedQueue {
  std::unique_ptr<Queue> queue;
  size_t pending = 0;
  int64_t now_ms = 0;
};

struct PreparedSlot {
  std::shared_ptr<void> prepared;  // a PreparedQueue of whatever queue and layout
  const void* owner = nullptr;     // the benchmark instantiation it was built for
};

PreparedSlot& ThePreparedSlot() {
  static PreparedSlot slot;
  return slot;
}

// `owner` is the address of a static in the calling benchmark: one per instantiation.
template <typename Queue, Layout kLayout>
PreparedQueue<Queue, kLayout>& Prepare(size_t pending, const void* owner) {
  using Prepared = PreparedQueue<Queue, kLayout>;
  PreparedSlot& slot = ThePreparedSlot();
  if (slot.owner == owner && static_cast<Prepared*>(slot.prepared.get())->pending == pending) {
    return *static_cast<Prepared*>(slot.prepared.get());
  }
  slot.prepared.reset();  // free the previous queue before building the next one
  auto prepared = std::make_shared<Prepared>();
  prepared->queue = MakeQueue<Queue>();
  prepared->pending = pending;
  std::mt19937_64 rng(pending);
  std::uniform_int_distribution<int64_t> far_deadline_ms(30 * kDayMs, 365 * kDayMs);
  for (size_t i = 0; i < pending; ++i) {
    const int64_t deadline_ms =
        kLayout == Layout::kFarAhead ? far_deadline_ms(rng) : static_cast<int64_t>(i) + 1;
    prepared->queue->schedule(deadline_ms, i);
  }
  slot.prepared = prepared;
  slot.owner = owner;
  return *prepared;
}

template <typename Queue>
void BM_ScheduleCancel(benchmark::State& state) {
  static const char kOwner = 0;
  auto& prepared = Prepare<Queue, Layout::kFarAhead>(static_cast<size_t>(state.range(0)), &kOwner);
  Queue& queue = *prepared.queue;
  const auto offsets_ms = RandomOffsetsMs(1, kDayMs, 42);
  size_t i = 0;
  for (auto _ : state) {
    auto handle = queue.schedule(prepared.now_ms + offsets_ms[i & (kOffsets - 1)], i);
    ++i;
    benchmark::DoNotOptimize(queue.cancel(handle));
  }
  state.SetItemsProcessed(state.iterations());
}

template <typename Queue>
void BM_ScheduleExpire(benchmark::State& state) {
  static const char kOwner = 0;
  auto& prepared = Prepare<Queue, Layout::kFarAhead>(static_cast<size_t>(state.range(0)), &kOwner);
  Queue& queue = *prepared.queue;
  size_t fired = 0;
  uint64_t payload = 0;
  for (auto _ : state) {
    queue.schedule(prepared.now_ms + kExpireDelayMs, ++payload);
    ++prepared.now_ms;
    fired +=
        queue.advance(prepared.now_ms, [](uint64_t p, int64_t) { benchmark::DoNotOptimize(p); });
  }
  // Drain the short timers so the queue holds exactly the prepared ones again.
  prepared.now_ms += kExpireDelayMs;
  fired += queue.advance(prepared.now_ms, [](uint64_t, int64_t) {});
  if (fired != payload) state.SkipWithError("a scheduled timer did not expire");
  state.SetItemsProcessed(state.iterations());
}

// Every pending timer expires in turn: N timers one per millisecond; each iteration moves
// time by 1 ms, expires the timer due then and schedules a new one N ms ahead. The whole life
// of a timer is measured, cascades through the coarse levels included.
template <typename Queue>
void BM_ExpireInTurn(benchmark::State& state) {
  const auto pending = static_cast<size_t>(state.range(0));
  static const char kOwner = 0;
  auto& prepared = Prepare<Queue, Layout::kOnePerMillisecond>(pending, &kOwner);
  Queue& queue = *prepared.queue;
  size_t fired = 0;
  uint64_t payload = 0;
  for (auto _ : state) {
    ++prepared.now_ms;
    fired +=
        queue.advance(prepared.now_ms, [](uint64_t p, int64_t) { benchmark::DoNotOptimize(p); });
    queue.schedule(prepared.now_ms + static_cast<int64_t>(pending), ++payload);
  }
  if (fired != static_cast<size_t>(state.iterations()))
    state.SkipWithError("not one timer per millisecond fired");
  state.SetItemsProcessed(state.iterations());
}

// Idle cost: 1M timers 2 to 26 hours ahead, none due; advance through state.range(0) ms of
// simulated time, 1 ms at a time, the way a ticking wheel must.
template <typename Queue>
std::unique_ptr<Queue> IdleQueue() {
  auto queue = MakeQueue<Queue>();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> deadline_ms(2 * kHourMs, 26 * kHourMs);
  for (size_t i = 0; i < 1'000'000; ++i) queue->schedule(deadline_ms(rng), i);
  return queue;
}

template <typename Queue>
void BM_IdleInMillisecondSteps(benchmark::State& state) {
  const int64_t span_ms = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    auto queue = IdleQueue<Queue>();
    state.ResumeTiming();
    size_t fired = 0;
    for (int64_t now_ms = 1; now_ms <= span_ms; ++now_ms) {
      fired += queue->advance(now_ms, [](uint64_t, int64_t) {});
    }
    if (fired != 0) state.SkipWithError("a far-future timer fired");
    state.PauseTiming();
    queue.reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_step"] =
      benchmark::Counter(static_cast<double>(state.iterations() * span_ms),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The way the bridge drives the wheel: sleep until next_deadline_ms(), never tick.
void BM_IdleHourSleepingUntilNextDeadline(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto wheel = IdleQueue<TimingWheel>();
    state.ResumeTiming();
    size_t wake_ups = 0;
    for (auto next_ms = wheel->next_deadline_ms(); next_ms && *next_ms <= kHourMs;
         next_ms = wheel->next_deadline_ms()) {
      wheel->advance(*next_ms, [](uint64_t, int64_t) {});
      ++wake_ups;
    }
    wheel->advance(kHourMs, [](uint64_t, int64_t) {});
    benchmark::DoNotOptimize(wake_ups);
    state.PauseTiming();
    wheel.reset();
    state.ResumeTiming();
  }
}

template <typename Queue>
void BM_SteadyStream(benchmark::State& state) {
  const int64_t per_ms = state.range(0);
  auto queue = MakeQueue<Queue>();
  const auto offsets = RandomOffsetsMs(1'000, 10'000, 11);
  int64_t now_ms = 0;
  size_t next_offset = 0;
  uint64_t payload = 0;
  size_t fired = 0;
  auto schedule_this_millisecond = [&] {
    for (int64_t i = 0; i < per_ms; ++i) {
      queue->schedule(now_ms + offsets[next_offset++ & (kOffsets - 1)], ++payload);
    }
  };
  auto advance = [&] {
    ++now_ms;
    fired += queue->advance(now_ms, [](uint64_t p, int64_t) { benchmark::DoNotOptimize(p); });
  };
  // 10 s of the stream first: the queue then holds what it holds in the steady state.
  for (int i = 0; i < 10'000; ++i) {
    advance();
    schedule_this_millisecond();
  }
  std::chrono::nanoseconds longest{0};
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    advance();
    schedule_this_millisecond();
    longest = std::max(longest, std::chrono::steady_clock::now() - start);
  }
  if (fired == 0) state.SkipWithError("nothing fired");
  state.SetItemsProcessed(state.iterations() * per_ms);
  state.counters["longest_step_us"] = static_cast<double>(longest.count()) / 1e3;
}

void BM_WheelMemoryPerTimer(benchmark::State& state) {
  const size_t pending = static_cast<size_t>(state.range(0));
  static const char kOwner = 0;
  auto& prepared = Prepare<TimingWheel, Layout::kFarAhead>(pending, &kOwner);
  for (auto _ : state) benchmark::DoNotOptimize(prepared.queue->memory_bytes());
  state.counters["bytes_per_timer"] =
      static_cast<double>(prepared.queue->memory_bytes()) / static_cast<double>(pending);
}

template <typename Queue>
void RegisterQueue(const std::string& name, int64_t pending) {
  benchmark::RegisterBenchmark(("ScheduleCancel/" + name).c_str(), BM_ScheduleCancel<Queue>)
      ->Arg(pending);
  benchmark::RegisterBenchmark(("ScheduleExpire/" + name).c_str(), BM_ScheduleExpire<Queue>)
      ->Arg(pending);
  if constexpr (std::is_same_v<Queue, TimingWheel>) {
    benchmark::RegisterBenchmark("MemoryPerTimer/wheel", BM_WheelMemoryPerTimer)->Arg(pending);
  }
  benchmark::RegisterBenchmark(("ExpireInTurn/" + name).c_str(), BM_ExpireInTurn<Queue>)
      ->Arg(pending);
}

void RegisterAll() {
  for (int64_t pending : {1'000, 100'000, 1'000'000, 10'000'000}) {
    RegisterQueue<TimingWheel>("wheel", pending);
    RegisterQueue<HeapTimerQueue>("heap", pending);
    RegisterQueue<AsioTimerQueue>("asio", pending);
    RegisterQueue<HashedWheelTimer>("hashed", pending);
  }
  // A full hour for the wheel; the hashed wheel visits ~2,000 timers per step, so it runs one
  // simulated minute and its hour is ns_per_step x 3.6M (every step costs the same).
  benchmark::RegisterBenchmark("Idle1msSteps/wheel", BM_IdleInMillisecondSteps<TimingWheel>)
      ->Arg(kHourMs)
      ->Iterations(3)
      ->Repetitions(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Idle1msSteps/hashed", BM_IdleInMillisecondSteps<HashedWheelTimer>)
      ->Arg(60'000)
      ->Iterations(1)
      ->Repetitions(1)
      ->Unit(benchmark::kMillisecond);
  // 20 s of simulated time: about five 4.1 s slots of level 2, each cascaded whole.
  for (int64_t per_ms : {25, 100}) {
    benchmark::RegisterBenchmark("SteadyStream/wheel", BM_SteadyStream<TimingWheel>)
        ->Arg(per_ms)
        ->Iterations(20'000)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("SteadyStream/heap", BM_SteadyStream<HeapTimerQueue>)
        ->Arg(per_ms)
        ->Iterations(20'000)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("IdleHourSleepUntilNext/wheel", BM_IdleHourSleepingUntilNextDeadline)
      ->Iterations(3)
      ->Repetitions(1)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace delaybridge::bench

int main(int argc, char** argv) {
  delaybridge::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
