// What one timer wake-up of a sleeping thread costs in CPU time, the price the delivery thread
// pays once per tick that has records due (plugin/due_timer.h): the thread sleeps in epoll_wait,
// a timer fires, it wakes, does nothing, and sleeps again. Google Benchmark's CPU column is the
// thread's CPU time per wake-up; its Time column is the period.
// - BM_TimerfdWakeUp: epoll_wait on a periodic timerfd, the least a thread pays.
// - BM_AsioTimerWakeUp: an io_context whose steady_timer handler re-arms it for the next period,
//   as DueTimer::Arm does; Asio's reactor waits on a timerfd too and sets it on each change.
// - BM_SystemCallWithoutSleep: getppid(), to tell the price of entering the kernel from that of
//   sleeping and waking.
#include <benchmark/benchmark.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>

namespace delaybridge::plugin {
namespace {

// Closes a descriptor it owns.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void BM_TimerfdWakeUp(benchmark::State& state) {
  const auto period_ns = state.range(0) * 1000;
  Descriptor poller(epoll_create1(EPOLL_CLOEXEC));
  Descriptor timer(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  epoll_event interest{};
  interest.events = EPOLLIN;
  if (poller.get() < 0 || timer.get() < 0 ||
      epoll_ctl(poller.get(), EPOLL_CTL_ADD, timer.get(), &interest) != 0) {
    return state.SkipWithError("epoll or timerfd");
  }
  itimerspec every{};
  every.it_interval.tv_sec = every.it_value.tv_sec = period_ns / 1'000'000'000;
  every.it_interval.tv_nsec = every.it_value.tv_nsec = period_ns % 1'000'000'000;
  if (timerfd_settime(timer.get(), 0, &every, nullptr) != 0) return state.SkipWithError("arm");
  for (auto _ : state) {
    epoll_event ready;
    if (epoll_wait(poller.get(), &ready, 1, -1) != 1) return state.SkipWithError("epoll_wait");
    uint64_t expirations = 0;
    if (read(timer.get(), &expirations, sizeof expirations) != sizeof expirations) {
      return state.SkipWithError("read timerfd");
    }
  }
}
BENCHMARK(BM_TimerfdWakeUp)->ArgName("period_us")->Arg(1000)->Iterations(2000);

void BM_AsioTimerWakeUp(benchmark::State& state) {
  const std::chrono::microseconds period(state.range(0));
  boost::asio::io_context io;
  boost::asio::steady_timer timer(io);
  std::function<void()> arm = [&] {
    timer.expires_after(period);
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) arm();
    });
  };
  arm();
  for (auto _ : state) {
    if (io.run_one() != 1) return state.SkipWithError("io_context stopped");
  }
}
BENCHMARK(BM_AsioTimerWakeUp)->ArgName("period_us")->Arg(1000)->Iterations(2000);

void BM_SystemCallWithoutSleep(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(syscall(SYS_getppid));
}
BENCHMARK(BM_SystemCallWithoutSleep);

}  // namespace
}  // namespace delaybridge::plugin
