// Benchmarks of TimingWheel against three other timer queues, side by side at 1k, 100k, 1M and
// 10M pending timers: a std heap with lazy cancel, Boost.Asio's timer queue, and a Netty-style
// hashed wheel. Plus the idle cost of advancing one hour with 1M timers pending and none due.
//
//   cmake -S . -B build-core-rel -G Ninja -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-core-rel --target bench_core && build-core-rel/bin/bench_core
//
// One iteration of ScheduleCancel schedules a timer (deadline 1 ms to 24 h ahead) and cancels
// it. One iteration of ScheduleExpire schedules a timer 100 ms ahead, moves time by 1 ms and
// expires the one timer that became due. The N pending timers sit 30 to 365 days ahead.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>

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

// A queue holding `pending` timers 30 to 365 days ahead. Building 10M timers takes seconds, so
// each queue type keeps its last one; both benchmarks leave it with `pending` timers again.
template <typename Queue>
struct PreparedQueue {
  std::unique_ptr<Queue> queue;
  size_t pending = 0;
  int64_t now_ms = 0;
};

template <typename Queue>
PreparedQueue<Queue>& Prepare(size_t pending) {
  static PreparedQueue<Queue> prepared;
  if (prepared.queue && prepared.pending == pending) return prepared;
  prepared.queue.reset();
  prepared.queue = MakeQueue<Queue>();
  prepared.pending = pending;
  prepared.now_ms = 0;
  std::mt19937_64 rng(pending);
  std::uniform_int_distribution<int64_t> deadline_ms(30 * kDayMs, 365 * kDayMs);
  for (size_t i = 0; i < pending; ++i) prepared.queue->schedule(deadline_ms(rng), i);
  return prepared;
}

template <typename Queue>
void BM_ScheduleCancel(benchmark::State& state) {
  PreparedQueue<Queue>& prepared = Prepare<Queue>(static_cast<size_t>(state.range(0)));
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
  PreparedQueue<Queue>& prepared = Prepare<Queue>(static_cast<size_t>(state.range(0)));
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

// Idle cost: 1M timers 2 to 26 hours ahead, none due; advance one hour, 1 ms at a time.
template <typename Queue>
std::unique_ptr<Queue> IdleQueue() {
  auto queue = MakeQueue<Queue>();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> deadline_ms(2 * kHourMs, 26 * kHourMs);
  for (size_t i = 0; i < 1'000'000; ++i) queue->schedule(deadline_ms(rng), i);
  return queue;
}

template <typename Queue>
void BM_IdleHourInMillisecondSteps(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto queue = IdleQueue<Queue>();
    state.ResumeTiming();
    size_t fired = 0;
    for (int64_t now_ms = 1; now_ms <= kHourMs; ++now_ms) {
      fired += queue->advance(now_ms, [](uint64_t, int64_t) {});
    }
    if (fired != 0) state.SkipWithError("a far-future timer fired");
    state.PauseTiming();
    queue.reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_step"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kHourMs),
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

void BM_WheelMemoryPerTimer(benchmark::State& state) {
  const size_t pending = static_cast<size_t>(state.range(0));
  PreparedQueue<TimingWheel>& prepared = Prepare<TimingWheel>(pending);
  for (auto _ : state) benchmark::DoNotOptimize(prepared.queue->memory_bytes());
  state.counters["bytes_per_timer"] =
      static_cast<double>(prepared.queue->memory_bytes()) / static_cast<double>(pending);
}

void RegisterAll() {
  for (int64_t pending : {1'000, 100'000, 1'000'000, 10'000'000}) {
    const auto add = [&](const std::string& name, auto* function) {
      benchmark::RegisterBenchmark(name.c_str(), function)->Arg(pending);
    };
    add("ScheduleCancel/wheel", BM_ScheduleCancel<TimingWheel>);
    add("ScheduleCancel/heap", BM_ScheduleCancel<HeapTimerQueue>);
    add("ScheduleCancel/asio", BM_ScheduleCancel<AsioTimerQueue>);
    add("ScheduleCancel/hashed", BM_ScheduleCancel<HashedWheelTimer>);
    add("ScheduleExpire/wheel", BM_ScheduleExpire<TimingWheel>);
    add("ScheduleExpire/heap", BM_ScheduleExpire<HeapTimerQueue>);
    add("ScheduleExpire/asio", BM_ScheduleExpire<AsioTimerQueue>);
    add("ScheduleExpire/hashed", BM_ScheduleExpire<HashedWheelTimer>);
    add("MemoryPerTimer/wheel", BM_WheelMemoryPerTimer);
  }
  benchmark::RegisterBenchmark("IdleHour1msSteps/wheel", BM_IdleHourInMillisecondSteps<TimingWheel>)
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("IdleHour1msSteps/hashed",
                               BM_IdleHourInMillisecondSteps<HashedWheelTimer>)
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("IdleHourSleepUntilNext/wheel", BM_IdleHourSleepingUntilNextDeadline)
      ->Iterations(3)
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
