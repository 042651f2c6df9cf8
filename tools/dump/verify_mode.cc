// delaylog-dump --verify: DelayLogReader::Verify over the store, then a check that every
// payload decodes as the kind its first byte says (a DelayedRecord or a cancel); one line per
// problem with its file and byte offset; damaged (exit 1) when there is any.
#include "storage/hour_files.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {
namespace {

// Problem texts from record reads repeat "<file> at offset <n>: ", which the line already says.
std::string WithoutLocation(const storage::VerifyProblem& problem) {
  std::string prefix = problem.file + " at offset " + std::to_string(problem.offset) + ": ";
  if (problem.what.starts_with(prefix)) return problem.what.substr(prefix.size());
  return problem.what;
}

// DelayLogReader::Verify checks the bytes, not what they mean: this pass decodes every record
// that passed its checksum, as the preloader will (a payload it cannot decode is skipped there).
Status VerifyPayloads(storage::DelayLogReader* reader, storage::VerifyReport* report) {
  for (int64_t epoch_hour : reader->Hours()) {
    const std::string data_file = storage::PathsOfHour(reader->dir(), epoch_hour).data;
    Status s = reader->ForEachRecord(epoch_hour, [&](const storage::HourRecordView& record) {
      // An unreadable record is a problem Verify reported already.
      if (!record.status.ok()) return true;
      Result<StoredPayload> decoded = DecodeStoredPayload(record.status, record.payload);
      if (!decoded.ok()) {
        report->problems.push_back({data_file, record.index.entry.log_offset,
                                    "payload does not decode: " + decoded.status().ToString(),
                                    false});
      }
      return true;
    });
    // A damaged header or a missing index is a problem Verify reported already (and the bridge
    // removes delivered hours while it runs); anything else stops the check.
    if (!s.ok() && s.code() != Status::Code::kCorruption && s.code() != Status::Code::kNotFound) {
      return s;
    }
  }
  return Status::Ok();
}

}  // namespace

int RunVerify(const DumpContext& ctx, storage::DelayLogReader* reader) {
  const std::string& store = reader->dir();
  Result<storage::VerifyReport> report = reader->Verify();
  if (!report.ok()) return ReportFailure(ctx, store, report.status());
  if (Status s = VerifyPayloads(reader, &report.value()); !s.ok()) {
    return ReportFailure(ctx, store, s);
  }
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
