// delaylog-dump --verify: DelayLogReader::Verify over the store, one line per problem with its
// file and byte offset; damaged (exit 1) when there is any.
#include "tools/dump/dump_context.h"

namespace delaybridge::dump {
namespace {

// Problem texts from record reads repeat "<file> at offset <n>: ", which the line already says.
std::string WithoutLocation(const storage::VerifyProblem& problem) {
  std::string prefix = problem.file + " at offset " + std::to_string(problem.offset) + ": ";
  if (problem.what.starts_with(prefix)) return problem.what.substr(prefix.size());
  return problem.what;
}

}  // namespace

int RunVerify(const DumpContext& ctx, storage::DelayLogReader* reader) {
  const std::string& store = reader->dir();
  Result<storage::VerifyReport> report = reader->Verify();
  if (!report.ok()) return ReportFailure(ctx, store, report.status());
  uint64_t tail_problems = 0;
  for (const storage::VerifyProblem& problem : report->problems) {
    if (problem.at_tail) tail_problems += 1;
    if (ctx.options.json) {
      ctx.Emit(JsonLine("problem")
                   .Str("store", store)
                   .Str("file", problem.file)
                   .Uint("offset", problem.offset)
                   .Str("what", WithoutLocation(problem))
                   .Bool("at_tail", problem.at_tail));
    } else {
      ctx.out << "PROBLEM " << problem.file << " offset " << problem.offset << ": "
              << WithoutLocation(problem) << '\n';
    }
  }
  bool clean = report->clean();
  if (ctx.options.json) {
    ctx.Emit(JsonLine("verify")
                 .Str("store", store)
                 .Bool("clean", clean)
                 .Uint("problems", report->problems.size())
                 .Uint("tail_problems", tail_problems)
                 .Uint("hours", report->hours)
                 .Uint("entries", report->entries)
                 .Uint("records_ok", report->records_ok)
                 .Bool("checkpoint_present", report->checkpoint_present));
  } else {
    ctx.out << "store " << store << ": " << (clean ? "clean" : "DAMAGED") << ", " << report->hours
            << " hours, " << report->entries << " index entries, " << report->records_ok
            << " records ok, " << report->problems.size() << " problems, "
            << (report->checkpoint_present ? "checkpoint ok" : "no checkpoint") << '\n';
    if (!clean && tail_problems == report->problems.size()) {
      // Only tails: exactly what a store looks like while the bridge is appending.
      ctx.out << "  every problem is at the end of a file: a write in progress looks like "
                 "this; run again, or stop the bridge to be sure\n";
    }
  }
  return clean ? kExitOk : kExitDamaged;
}

}  // namespace delaybridge::dump
