// delaylog-dump --find-source and --find-key: walks every non-empty second of every hour and
// prints each record whose source id or key matches, with its location and delivered state.
#include <algorithm>

#include "plugin/delayed_record.h"
#include "storage/format.h"
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
  for (int64_t epoch_hour : reader->Hours()) {
    Result<std::array<uint32_t, storage::kSecondsPerHour>> counts =
        reader->SecondCounts(epoch_hour);
    if (!counts.ok()) {
      exit_code = std::max(exit_code, ReportFailure(ctx, store, counts.status()));
      continue;
    }
    for (int64_t s = 0; s < storage::kSecondsPerHour; ++s) {
      if ((*counts)[s] == 0) continue;
      std::vector<storage::ChainRecordView> chain;
      Status chain_status = reader->ReadSecond(epoch_hour * storage::kSecondsPerHour + s, &chain);
      if (!chain_status.ok())
        exit_code = std::max(exit_code, ReportFailure(ctx, store, chain_status));
      for (const storage::ChainRecordView& record : chain) {
        examined += 1;
        Result<plugin::DelayedRecord> decoded = record.status.ok()
                                                    ? plugin::DecodeDelayedRecord(record.payload)
                                                    : Result<plugin::DelayedRecord>(record.status);
        if (!decoded.ok()) {
          // An unreadable record might be the one sought: say so rather than "not found".
          exit_code = std::max(exit_code, ReportFailure(ctx, store, decoded.status()));
          continue;
        }
        if (!Matches(ctx.options, *decoded)) continue;
        matches += 1;
        PrintRecord(ctx, store, record, *checkpoint);
      }
    }
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
