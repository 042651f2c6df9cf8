// delaylog-dump: shows what a DelayBridge store holds and checks it, never writing to it.
// Usage: delaylog-dump --help (modes and exit codes in tools/dump/dump_options.cc).
#include <algorithm>
#include <iostream>

#include "storage/delay_log_reader.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/dump_options.h"
#include "tools/dump/store_locator.h"

namespace delaybridge::dump {
namespace {

int RunMode(const DumpContext& ctx, storage::DelayLogReader* reader) {
  switch (ctx.options.mode) {
    case DumpMode::kHour:
      return RunHour(ctx, reader);
    case DumpMode::kSecond:
      return RunSecond(ctx, reader);
    case DumpMode::kFindSource:
    case DumpMode::kFindKey:
      return RunFind(ctx, reader);
    case DumpMode::kVerify:
      return RunVerify(ctx, reader);
    case DumpMode::kSummary:
    case DumpMode::kHelp:
      break;
  }
  return RunSummary(ctx, reader);
}

int Main(const std::vector<std::string>& args) {
  Result<DumpOptions> options = ParseDumpOptions(args);
  if (!options.ok()) {
    std::cerr << "delaylog-dump: " << options.status().message() << "\n(see --help)\n";
    return kExitUsage;
  }
  if (options->mode == DumpMode::kHelp) {
    std::cout << DumpUsage();
    return kExitOk;
  }
  DumpContext ctx{*options, std::cout, std::cerr};
  Result<std::vector<std::string>> stores = LocateStores(options->path);
  if (!stores.ok()) return ReportFailure(ctx, options->path, stores.status());
  int exit_code = kExitOk;
  for (const std::string& store : *stores) {
    Result<std::unique_ptr<storage::DelayLogReader>> reader = storage::DelayLogReader::Open(store);
    int store_exit =
        reader.ok() ? RunMode(ctx, reader->get()) : ReportFailure(ctx, store, reader.status());
    exit_code = std::max(exit_code, store_exit);
  }
  return exit_code;
}

}  // namespace
}  // namespace delaybridge::dump

int main(int argc, char** argv) {
  return delaybridge::dump::Main(std::vector<std::string>(argv + 1, argv + argc));
}
