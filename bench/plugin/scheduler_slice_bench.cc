// How late a thread that sleeps until a deadline every millisecond (as the delivery thread does,
// one timer per wheel tick) starts running on CPUs that busy threads keep full, with the kernel's
// default scheduler slice and with a short one. Since Linux 6.12 the fair scheduler (EEVDF) takes
// a slice length per thread (sched_setattr's sched_runtime for SCHED_OTHER): a thread with a
// shorter slice gets an earlier virtual deadline (so, in principle, runs sooner when it wakes on
// a busy CPU), with the same share of the CPU (docs/BENCHMARKS.md, "The 50% runs wait for a CPU;
// short scheduler slices: not adopted"). Two busy threads per CPU spin while the probe thread takes
// kWakeUps deadlines, working ~20 us after each. Counters: percentiles of the delay from the
// deadline to the thread running, in microseconds. Older kernels ignore the slice and both rows are
// alike.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace delaybridge::plugin {
namespace {

constexpr int kWakeUps = 3000;
constexpr int64_t kPeriodNs = 1'000'000;

// The first version of the kernel's struct sched_attr (SCHED_ATTR_SIZE_VER0): glibc 2.36 has
// neither the struct nor a wrapper, and <linux/sched/types.h> clashes with <sched.h>.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};
static_assert(sizeof(SchedAttr) == 48);

// Sets the calling thread's slice; an empty string on success.
std::string SetOwnSlice(int64_t slice_us) {
  SchedAttr attr{};
  attr.size = sizeof(attr);
  attr.sched_policy = SCHED_OTHER;
  attr.sched_nice = getpriority(PRIO_PROCESS, 0);  // 0: this thread; sched_setattr sets it too
  attr.sched_runtime = static_cast<uint64_t>(slice_us) * 1000;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) == 0) return "";
  return std::string("sched_setattr: ") + std::strerror(errno);
}

int64_t MonotonicNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

// Spins on this many threads until destroyed.
class BusyThreads {
 public:
  explicit BusyThreads(unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~BusyThreads() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// The delays of kWakeUps wake-ups, in ns, sorted.
std::vector<int64_t> ProbeWakeUps() {
  std::vector<int64_t> delays;
  delays.reserve(kWakeUps);
  int64_t deadline = MonotonicNs();
  for (int i = 0; i < kWakeUps; ++i) {
    deadline += kPeriodNs;
    const timespec at{static_cast<time_t>(deadline / 1'000'000'000),
                      static_cast<long>(deadline % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
    }
    delays.push_back(MonotonicNs() - deadline);
    // About the work of one tick of deliveries.
    const int64_t busy_until = MonotonicNs() + 20'000;
    while (MonotonicNs() < busy_until) {
    }
  }
  std::sort(delays.begin(), delays.end());
  return delays;
}

void BM_TimerDelayOnBusyCpus(benchmark::State& state) {
  const int64_t slice_us = state.range(0);
  std::vector<int64_t> delays;
  for (auto _ : state) {
    // Started from this thread, which keeps the kernel's default slice: a new thread inherits
    // its creator's slice, and only the probe may have the short one.
    BusyThreads busy(2 * std::max(1u, std::thread::hardware_concurrency()));
    std::thread probe([&] {
      if (slice_us > 0) {
        if (const std::string error = SetOwnSlice(slice_us); !error.empty()) {
          state.SkipWithError(error.c_str());
          return;
        }
      }
      delays = ProbeWakeUps();
    });
    probe.join();
  }
  if (delays.empty()) return;
  auto at = [&](double q) {
    return static_cast<double>(delays[static_cast<std::size_t>(q * (delays.size() - 1))]) / 1000;
  };
  state.counters["p50_us"] = at(0.5);
  state.counters["p99_us"] = at(0.99);
  state.counters["p99.9_us"] = at(0.999);
  state.counters["max_us"] = at(1.0);
}
BENCHMARK(BM_TimerDelayOnBusyCpus)
    ->ArgNames({"slice_us"})
    ->Arg(0)
    ->Arg(100)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace delaybridge::plugin
