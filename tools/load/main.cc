// delaybridge-load: command-line entry point. See LoadUsage() (--help) for what it does.
#include <cstdio>
#include <string>
#include <vector>

#include "tools/load/load_options.h"
#include "tools/load/load_report.h"
#include "tools/load/load_run.h"

namespace {

constexpr int kExitBadArguments = 2;
constexpr int kExitKafkaError = 3;

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
  delaybridge::Result<LoadReport> report = RunLoad(*options);
  if (!report.ok()) {
    std::fprintf(stderr, "delaybridge-load: %s\n", report.status().ToString().c_str());
    return report.status().code() == delaybridge::Status::Code::kInvalidArgument ? kExitBadArguments
                                                                                 : kExitKafkaError;
  }
  const std::string text = options->json ? FormatJson(*report) + "\n" : FormatText(*report);
  std::fputs(text.c_str(), stdout);
  return report->ExitCode();
}
