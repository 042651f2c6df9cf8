// delaylog-dump --find-source and --find-key: reads every record of every hour in one
// sequential pass and prints each one whose source id or key matches, with its location
// (hour file, offsets, second, ordinal) and delivered state.
#include <algorithm>

#include "plugin/delayed_record.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/record_printer.h"

namespace delaybridge::dump {
namespace {

using storage::DelayLogReader;

bool Matches(const DumpOptions& options, const plugin::DelayedRecord& record) {
  if (options.mode == DumpMode::kFindKey) return record.key && *record.key == options.key;
  return record.source_topic == options.source_topic &&
         record.source_partition == options.source_partition &&
         record.source_offset == options.source_offset;
}

std::string WhatIsSought(const DumpOptions& options) {
  if (options.mode == DumpMode::kFindKey) return "key " + options.key;
  return "source " + options.source_topic + "/" + std::to_string(options.source_partition) + "/" +
         std::to_string(options.source_offset);
}

}  // namespace

int RunFind(const DumpContext& ctx, DelayLogReader* reader) {
  const std::string& store = reader->dir();
  Result<MaybeCheckpoint> checkpoint = storage::ReadDeliveryCheckpoint(store);
  if (!checkpoint.ok()) return ReportFailure(ctx, store, checkpoint.status());
  int exit_code = kExitOk;
  uint64_t matches = 0, examined = 0;
  auto visit = [&](const storage::HourRecordView& record) {
    examined += 1;
    Result<plugin::DelayedRecord> decoded = record.status.ok()
                                                ? plugin::DecodeDelayedRecord(record.payload)
                                                : Result<plugin::DelayedRecord>(record.status);
    if (!decoded.ok()) {
      // An unreadable record might be the one sought: say so rather than only "not found".
      exit_code = std::max(exit_code, ReportFailure(ctx, store, decoded.status()));
      return true;
    }
    if (!Matches(ctx.options, *decoded)) return true;
    matches += 1;
    PrintRecord(
        ctx, store,
        {record.index.position, record.ordinal, record.index.entry, record.status, record.payload},
        *checkpoint);
    return true;
  };
  for (int64_t epoch_hour : reader->Hours()) {
    Status s = reader->ForEachRecord(epoch_hour, visit);
    if (!s.ok()) exit_code = std::max(exit_code, ReportFailure(ctx, store, s));
  }
  if (ctx.options.json) {
    ctx.Emit(JsonLine("find_total")
                 .Str("store", store)
                 .Str("sought", WhatIsSought(ctx.options))
                 .Uint("matches", matches)
                 .Uint("records_examined", examined));
  } else {
    ctx.out << "store " << store << ": " << matches << " records with " << WhatIsSought(ctx.options)
            << " (" << examined << " records examined)\n";
  }
  return exit_code;
}

}  // namespace delaybridge::dump
