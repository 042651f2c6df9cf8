// delaylog-dump DIR: one line per hour file, totals, and the checkpoint.
#include <cstdio>

#include "storage/format.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/dump_time.h"

namespace delaybridge::dump {
namespace {

using storage::DelayLogReader;
using storage::HourSummary;

// Records of the hour ordered before the checkpoint. Only the checkpoint's own hour needs a
// look inside: earlier hours are wholly delivered, later ones wholly pending.
Result<uint64_t> DeliveredInHour(DelayLogReader* reader, const HourSummary& hour,
                                 const MaybeCheckpoint& checkpoint) {
  if (!checkpoint || hour.records == 0) return uint64_t{0};
  int64_t next_ms = checkpoint->next_deliver_at_ms;
  if (hour.max_deliver_at_ms < next_ms) return hour.records;
  if (hour.min_deliver_at_ms > next_ms) return uint64_t{0};
  Result<std::array<uint32_t, storage::kSecondsPerHour>> counts =
      reader->SecondCounts(hour.epoch_hour);
  if (!counts.ok()) return counts.status();
  int64_t next_second = storage::SecondOfMs(next_ms);
  uint64_t delivered = 0;
  for (int64_t s = 0; s < storage::kSecondsPerHour; ++s) {
    if (hour.epoch_hour * storage::kSecondsPerHour + s < next_second) delivered += (*counts)[s];
  }
  // The checkpoint's second: compare each record's (deliver_at_ms, ordinal).
  std::vector<storage::ChainRecordView> chain;
  Status s = reader->ReadSecond(next_second, &chain);
  if (!s.ok()) return s;
  for (const storage::ChainRecordView& record : chain) {
    if (IsDelivered(checkpoint, record.entry.deliver_at_ms, record.ordinal)) delivered += 1;
  }
  return delivered;
}

struct Totals {
  uint64_t hours = 0;
  uint64_t records = 0;
  uint64_t delivered = 0;
  uint64_t payload_bytes = 0;
  uint64_t file_bytes = 0;
};

void PrintHourText(const DumpContext& ctx, const HourSummary& hour, uint64_t delivered) {
  char line[256];
  std::string earliest = hour.records ? IsoMs(hour.min_deliver_at_ms) : "-";
  std::string latest = hour.records ? IsoMs(hour.max_deliver_at_ms) : "-";
  std::snprintf(line, sizeof(line), "  %-13s %10llu %12llu %12llu  %-24s  %-24s %10llu\n",
                hour.name.c_str(), static_cast<unsigned long long>(hour.records),
                static_cast<unsigned long long>(hour.payload_bytes),
                static_cast<unsigned long long>(hour.data_bytes + hour.index_bytes),
                earliest.c_str(), latest.c_str(), static_cast<unsigned long long>(delivered));
  ctx.out << line;
  if (hour.records) {
    ctx.out << "  " << std::string(13, ' ') << "  ms: " << hour.min_deliver_at_ms << " .. "
            << hour.max_deliver_at_ms << '\n';
  }
  // What a write in progress looks like (or a crash the next bridge start repairs).
  if (hour.index_tail_bytes > 0) {
    ctx.out << "    note: " << hour.index_file << " ends with " << hour.index_tail_bytes
            << " bytes of a partial entry: being written right now, or torn\n";
  }
  if (hour.unindexed_data_bytes > 0) {
    ctx.out << "    note: " << hour.data_file << " has " << hour.unindexed_data_bytes
            << " bytes after the last indexed record: being written right now, or torn\n";
  }
  if (hour.bad_entries > 0) {
    ctx.out << "    DAMAGED: " << hour.bad_entries << " index entries fail their checksum "
            << "(run --verify)\n";
  }
}

void PrintHourJson(const DumpContext& ctx, const std::string& store, const HourSummary& hour,
                   uint64_t delivered) {
  JsonLine line("hour");
  line.Str("store", store).Str("hour", hour.name).Uint("records", hour.records);
  line.Uint("delivered", delivered).Uint("pending", hour.records - delivered);
  line.Uint("payload_bytes", hour.payload_bytes)
      .Uint("data_bytes", hour.data_bytes)
      .Uint("index_bytes", hour.index_bytes);
  if (hour.records) {
    line.Int("earliest_ms", hour.min_deliver_at_ms)
        .Str("earliest", IsoMs(hour.min_deliver_at_ms))
        .Int("latest_ms", hour.max_deliver_at_ms)
        .Str("latest", IsoMs(hour.max_deliver_at_ms));
  }
  line.Uint("bad_entries", hour.bad_entries)
      .Uint("index_tail_bytes", hour.index_tail_bytes)
      .Uint("unindexed_data_bytes", hour.unindexed_data_bytes);
  ctx.Emit(line);
}

void PrintTotals(const DumpContext& ctx, const std::string& store, const Totals& totals) {
  if (ctx.options.json) {
    ctx.Emit(JsonLine("total")
                 .Str("store", store)
                 .Uint("hours", totals.hours)
                 .Uint("records", totals.records)
                 .Uint("delivered", totals.delivered)
                 .Uint("pending", totals.records - totals.delivered)
                 .Uint("payload_bytes", totals.payload_bytes)
                 .Uint("file_bytes", totals.file_bytes));
    return;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "  %-13s %10llu %12llu %12llu  %-24s  %-24s %10llu\n", "total",
                static_cast<unsigned long long>(totals.records),
                static_cast<unsigned long long>(totals.payload_bytes),
                static_cast<unsigned long long>(totals.file_bytes), "", "",
                static_cast<unsigned long long>(totals.delivered));
  ctx.out << line << "  " << totals.hours << " hour files, " << totals.records - totals.delivered
          << " records pending\n";
}

}  // namespace

int RunSummary(const DumpContext& ctx, DelayLogReader* reader) {
  const std::string& store = reader->dir();
  int exit_code = kExitOk;
  if (!ctx.options.json) {
    char header[256];
    std::snprintf(header, sizeof(header), "  %-13s %10s %12s %12s  %-24s  %-24s %10s\n",
                  "hour (UTC)", "records", "payload B", "file B", "earliest deliver-at",
                  "latest deliver-at", "delivered");
    ctx.out << "store " << store << '\n' << header;
  }
  Result<MaybeCheckpoint> checkpoint = storage::ReadDeliveryCheckpoint(store);
  if (!checkpoint.ok()) exit_code = ReportFailure(ctx, store, checkpoint.status());
  MaybeCheckpoint cp = checkpoint.ok() ? *checkpoint : std::nullopt;
  Totals totals;
  for (int64_t epoch_hour : reader->Hours()) {
    Result<HourSummary> hour = reader->SummarizeHour(epoch_hour);
    if (!hour.ok()) {
      exit_code = std::max(exit_code, ReportFailure(ctx, store, hour.status()));
      continue;
    }
    Result<uint64_t> delivered = DeliveredInHour(reader, *hour, cp);
    if (!delivered.ok()) {
      exit_code = std::max(exit_code, ReportFailure(ctx, store, delivered.status()));
      continue;
    }
    if (hour->bad_entries > 0) exit_code = std::max(exit_code, kExitDamaged);
    totals.hours += 1;
    totals.records += hour->records;
    totals.delivered += *delivered;
    totals.payload_bytes += hour->payload_bytes;
    totals.file_bytes += hour->data_bytes + hour->index_bytes;
    if (ctx.options.json) {
      PrintHourJson(ctx, store, *hour, *delivered);
    } else {
      PrintHourText(ctx, *hour, *delivered);
    }
  }
  PrintTotals(ctx, store, totals);
  if (checkpoint.ok()) PrintCheckpoint(ctx, store, cp);
  return exit_code;
}

}  // namespace delaybridge::dump
