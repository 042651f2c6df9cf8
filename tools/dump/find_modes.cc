// delaylog-dump --find-source and --find-key: reads every record of every hour in one
// sequential pass and prints each one whose source id or key matches, with its location
// (hour file, offsets, second, ordinal) and delivered state. A cancel matches --find-source by
// its own id. A match is printed when its hour has been read, since a cancel that names it is
// appended after it.
#include <algorithm>
#include <variant>
#include <vector>

#include "storage/format.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/record_printer.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {
namespace {

using storage::DelayLogReader;

bool SourceMatches(const DumpOptions& options, const std::string& topic, int32_t partition,
                   int64_t offset) {
  return topic == options.source_topic && partition == options.source_partition &&
         offset == options.source_offset;
}

bool Matches(const DumpOptions& options, const StoredPayload& payload) {
  if (const auto* cancel = std::get_if<plugin::StoredCancel>(&payload)) {
    // A cancel has no key.
    return options.mode == DumpMode::kFindSource &&
           SourceMatches(options, cancel->source_topic, cancel->source_partition,
                         cancel->cancel_offset);
  }
  const auto& record = std::get<plugin::DelayedRecord>(payload);
  if (options.mode == DumpMode::kFindKey) return record.key && *record.key == options.key;
  return SourceMatches(options, record.source_topic, record.source_partition, record.source_offset);
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
  // Of the hour being read.
  std::vector<storage::ChainRecordView> found;
  CancelTargets cancels;
  auto visit = [&](const storage::HourRecordView& record) {
    examined += 1;
    Result<StoredPayload> decoded = DecodeStoredPayload(record.status, record.payload);
    if (!decoded.ok()) {
      // An unreadable record might be the one sought: say so rather than only "not found".
      exit_code = std::max(exit_code, ReportFailure(ctx, store, decoded.status()));
      return true;
    }
    if (const auto* cancel = std::get_if<plugin::StoredCancel>(&decoded.value())) {
      cancels.Add(storage::SecondOfMs(record.index.entry.deliver_at_ms), *cancel);
    }
    if (!Matches(ctx.options, *decoded)) return true;
    found.push_back(
        {record.index.position, record.ordinal, record.index.entry, record.status, record.payload});
    return true;
  };
  for (int64_t epoch_hour : reader->Hours()) {
    found.clear();
    cancels = CancelTargets();
    Status s = reader->ForEachRecord(epoch_hour, visit);
    if (!s.ok()) exit_code = std::max(exit_code, ReportFailure(ctx, store, s));
    for (const storage::ChainRecordView& record : found) {
      PrintRecord(ctx, store, record, *checkpoint, cancels);
    }
    matches += found.size();
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
