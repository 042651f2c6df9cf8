// delaylog-dump --hour (per-second counts) and --second (every record of one chain).
#include <algorithm>

#include "storage/format.h"
#include "storage/hour_files.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/dump_time.h"
#include "tools/dump/record_printer.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {

using storage::DelayLogReader;

int RunHour(const DumpContext& ctx, DelayLogReader* reader) {
  const std::string& store = reader->dir();
  int64_t epoch_hour = ctx.options.epoch_hour;
  std::string hour_name = storage::HourName(epoch_hour);
  const std::vector<int64_t>& hours = reader->Hours();
  uint64_t records = 0, seconds = 0;
  if (std::binary_search(hours.begin(), hours.end(), epoch_hour)) {
    Result<std::array<uint32_t, storage::kSecondsPerHour>> counts =
        reader->SecondCounts(epoch_hour);
    if (!counts.ok()) return ReportFailure(ctx, store, counts.status());
    if (!ctx.options.json) ctx.out << "store " << store << " hour " << hour_name << '\n';
    for (int64_t s = 0; s < storage::kSecondsPerHour; ++s) {
      uint32_t count = (*counts)[s];
      if (count == 0) continue;
      int64_t epoch_second = epoch_hour * storage::kSecondsPerHour + s;
      records += count;
      seconds += 1;
      std::string at = IsoMs(epoch_second * storage::kMsPerSecond).substr(0, 19) + "Z";
      if (ctx.options.json) {
        ctx.Emit(JsonLine("second")
                     .Str("store", store)
                     .Int("second", epoch_second)
                     .Str("at", at)
                     .Uint("records", count));
      } else {
        ctx.out << "  " << at << "  " << epoch_second << "  " << count << '\n';
      }
    }
  } else if (!ctx.options.json) {
    ctx.out << "store " << store << " has no hour file " << hour_name << '\n';
  }
  if (ctx.options.json) {
    ctx.Emit(JsonLine("hour_total")
                 .Str("store", store)
                 .Str("hour", hour_name)
                 .Uint("records", records)
                 .Uint("seconds", seconds));
  } else {
    ctx.out << "  " << records << " records in " << seconds << " seconds\n";
  }
  return kExitOk;
}

int RunSecond(const DumpContext& ctx, DelayLogReader* reader) {
  const std::string& store = reader->dir();
  int64_t epoch_second = ctx.options.epoch_second;
  Result<MaybeCheckpoint> checkpoint = storage::ReadDeliveryCheckpoint(store);
  if (!checkpoint.ok()) return ReportFailure(ctx, store, checkpoint.status());
  std::vector<storage::ChainRecordView> chain;
  Status chain_status = reader->ReadSecond(epoch_second, &chain);
  std::string at = IsoMs(epoch_second * storage::kMsPerSecond).substr(0, 19) + "Z";
  if (!ctx.options.json) {
    ctx.out << "store " << store << " second " << epoch_second << " (" << at
            << "): " << chain.size() << " records, arrival order\n";
  }
  // A cancel follows its target in the chain: note them all before printing any record.
  CancelTargets cancels;
  for (const storage::ChainRecordView& record : chain) {
    if (record.status.ok()) cancels.AddIfCancel(epoch_second, record.payload);
  }
  int exit_code = kExitOk;
  for (const storage::ChainRecordView& record : chain) {
    exit_code = std::max(exit_code, PrintRecord(ctx, store, record, *checkpoint, cancels));
  }
  if (ctx.options.json) {
    ctx.Emit(JsonLine("second_total")
                 .Str("store", store)
                 .Int("second", epoch_second)
                 .Str("at", at)
                 .Uint("records", chain.size()));
  }
  // A broken chain: the records above are those reachable before the break.
  if (!chain_status.ok()) exit_code = std::max(exit_code, ReportFailure(ctx, store, chain_status));
  return exit_code;
}

}  // namespace delaybridge::dump
