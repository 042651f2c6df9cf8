#include "tools/load/pipe_run.h"

#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include "tools/load/load_run.h"
#include "tools/load/passthrough_pipe.h"

namespace delaybridge::load {

namespace {

constexpr int64_t kStopPollMs = 20;

int64_t SteadyMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Returns once `stop` is set or duration_ms (> 0) has passed.
void WaitForStop(const std::atomic<bool>& stop, int64_t duration_ms) {
  const int64_t start_ms = SteadyMs();
  while (!stop.load(std::memory_order_acquire) &&
         (duration_ms == 0 || SteadyMs() - start_ms < duration_ms)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kStopPollMs));
  }
}

}  // namespace

Result<PipeReport> RunPipe(const LoadOptions& options, const std::atomic<bool>& stop,
                           const std::function<void(const std::string& bootstrap)>& on_ready) {
  PipeReport report{options.bootstrap, options.delay_topic, options.target_topic};
  std::unique_ptr<plugin::EmbeddedCluster> embedded;
  if (options.bootstrap == "embedded") {
    Result<std::unique_ptr<plugin::EmbeddedCluster>> started = StartEmbeddedCluster(options);
    if (!started.ok()) return started.status();
    embedded = std::move(started.value());
    report.bootstrap = embedded->bootstrap_servers();
  }
  const std::string group_id = "delaybridge-load-pipe-" + std::to_string(std::random_device()());
  Result<std::unique_ptr<PassthroughPipe>> pipe =
      PassthroughPipe::Connect(report.bootstrap, options.delay_topic, options.target_topic,
                               group_id, options.rdkafka_overrides);
  if (!pipe.ok()) return pipe.status();

  std::atomic<bool> stop_pipe{false};
  const std::atomic<int64_t> no_hold{0};
  Status pipe_status;
  std::thread pipe_thread([&] { pipe_status = (*pipe)->Run(stop_pipe, no_hold); });
  const int64_t start_ms = SteadyMs();
  on_ready(report.bootstrap);
  WaitForStop(stop, options.duration_ms);
  stop_pipe.store(true, std::memory_order_release);
  pipe_thread.join();
  report.run_ms = SteadyMs() - start_ms;
  report.forwarded = (*pipe)->forwarded();
  if (!pipe_status.ok()) return pipe_status;
  return report;
}

std::string FormatPipeText(const PipeReport& report) {
  return "pipe " + report.delay_topic + " -> " + report.target_topic + "  bootstrap " +
         report.bootstrap + ": forwarded " + std::to_string(report.forwarded) + " records in " +
         std::to_string(report.run_ms) + " ms\n";
}

std::string FormatPipeJson(const PipeReport& report) {
  return "{\"mode\":\"pipe\",\"bootstrap\":\"" + report.bootstrap + "\",\"delay_topic\":\"" +
         report.delay_topic + "\",\"target_topic\":\"" + report.target_topic +
         "\",\"forwarded\":" + std::to_string(report.forwarded) +
         ",\"run_ms\":" + std::to_string(report.run_ms) + "}";
}

}  // namespace delaybridge::load
