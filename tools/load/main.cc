// delaybridge-load: command-line entry point. See LoadUsage() (--help) for what it does.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/load/load_options.h"
#include "tools/load/load_report.h"
#include "tools/load/load_run.h"
#include "tools/load/pipe_run.h"

namespace {

constexpr int kExitBadArguments = 2;
constexpr int kExitKafkaError = 3;

// Set by SIGTERM/SIGINT in --mode pipe. A lock-free atomic, so storing it is signal-safe.
std::atomic<bool> g_stop_pipe{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnStopSignal(int) { g_stop_pipe.store(true, std::memory_order_release); }

int ExitCodeOf(const delaybridge::Status& status) {
  return status.code() == delaybridge::Status::Code::kInvalidArgument ? kExitBadArguments
                                                                      : kExitKafkaError;
}

// --mode pipe: the "ready" line goes out (flushed) as soon as records are forwarded, so a script
// can start its load then; the report follows at the end.
int RunPipeProcess(const delaybridge::load::LoadOptions& options) {
  using namespace delaybridge::load;
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  delaybridge::Result<PipeReport> report =
      RunPipe(options, g_stop_pipe, [](const std::string& bootstrap) {
        std::printf("delaybridge-load: pipe ready bootstrap.servers=%s\n", bootstrap.c_str());
        std::fflush(stdout);
      });
  if (!report.ok()) {
    std::fprintf(stderr, "delaybridge-load: %s\n", report.status().ToString().c_str());
    return ExitCodeOf(report.status());
  }
  const std::string text = options.json ? FormatPipeJson(*report) + "\n" : FormatPipeText(*report);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace delaybridge::load;
  const std::vector<std::string> args(argv + 1, argv + argc);
  delaybridge::Result<LoadOptions> options = ParseLoadOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "delaybridge-load: %s\n", options.status().message().c_str());
    return kExitBadArguments;
  }
  if (options->show_help) {
    std::fputs(LoadUsage().c_str(), stdout);
    return 0;
  }
  if (options->mode == LoadMode::kPipe) return RunPipeProcess(*options);
  delaybridge::Result<LoadReport> report = RunLoad(*options);
  if (!report.ok()) {
    std::fprintf(stderr, "delaybridge-load: %s\n", report.status().ToString().c_str());
    return ExitCodeOf(report.status());
  }
  const std::string text = options->json ? FormatJson(*report) + "\n" : FormatText(*report);
  std::fputs(text.c_str(), stdout);
  return report->ExitCode();
}
