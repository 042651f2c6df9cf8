// delaylog-dump DIR: one line per hour file, totals, and the checkpoint. Every entry is a
// record delivered (ordered before the checkpoint), pending, cancelled (a cancel of its second
// names it) or a cancel.
#include <cstdio>

#include "plugin/stored_cancel.h"
#include "storage/format.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/dump_time.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {
namespace {

using plugin::KindOfStoredPayload;
using plugin::StoredPayloadKind;
using storage::DelayLogReader;
using storage::HourSummary;

// What the entries of one hour are. For the entries one pass saw, records = delivered + pending
// + cancels + cancelled.
struct HourCounts {
  uint64_t delivered = 0;  // records ordered before the checkpoint, not cancelled
  uint64_t pending = 0;    // records at or after it, not cancelled
  uint64_t cancels = 0;    // cancel payloads (plugin/stored_cancel.h)
  uint64_t cancelled = 0;  // records a cancel of their second names
};

// Moves the records a cancel names from delivered or pending to cancelled: a second pass over
// the hour, decoding only the records of seconds holding a cancel, and visiting only the entries
// the first pass saw (the bridge may have appended more since).
Status CountCancelled(DelayLogReader* reader, int64_t epoch_hour, uint64_t entries,
                      const CancelTargets& cancels, const MaybeCheckpoint& checkpoint,
                      HourCounts* counts) {
  uint64_t visited = 0;
  return reader->ForEachRecord(epoch_hour, [&](const storage::HourRecordView& record) {
    if (visited++ == entries) return false;
    const storage::IndexEntry& entry = record.index.entry;
    const int64_t second = storage::SecondOfMs(entry.deliver_at_ms);
    if (!record.status.ok() || !cancels.HasSecond(second)) return true;
    if (KindOfStoredPayload(record.payload) != StoredPayloadKind::kDelayedRecord) return true;
    Result<plugin::DelayedRecord> decoded = plugin::DecodeDelayedRecord(record.payload);
    if (!decoded.ok() || !cancels.Cancels(second, decoded->source_offset)) return true;
    counts->cancelled += 1;
    bool delivered = IsDelivered(checkpoint, entry.deliver_at_ms, record.ordinal);
    (delivered ? counts->delivered : counts->pending) -= 1;
    return true;
  });
}

// Sequential passes over the hour's records (an index entry does not say what its payload is):
// one that counts, and when the hour holds a cancel, one that finds the records it names. A
// cancel drops records of its whole second, so the first pass must have seen every cancel.
Result<HourCounts> CountHour(DelayLogReader* reader, int64_t epoch_hour,
                             const MaybeCheckpoint& checkpoint) {
  HourCounts counts;
  CancelTargets cancels;
  uint64_t entries = 0;
  Status s = reader->ForEachRecord(epoch_hour, [&](const storage::HourRecordView& record) {
    entries += 1;
    const storage::IndexEntry& entry = record.index.entry;
    if (record.status.ok() && KindOfStoredPayload(record.payload) == StoredPayloadKind::kCancel) {
      counts.cancels += 1;
      cancels.AddIfCancel(storage::SecondOfMs(entry.deliver_at_ms), record.payload);
    } else if (IsDelivered(checkpoint, entry.deliver_at_ms, record.ordinal)) {
      // An unreadable record counts by its position, as the index shows it.
      counts.delivered += 1;
    } else {
      counts.pending += 1;
    }
    return true;
  });
  if (!s.ok()) return s;
  if (!cancels.empty()) {
    s = CountCancelled(reader, epoch_hour, entries, cancels, checkpoint, &counts);
    if (!s.ok()) return s;
  }
  return counts;
}

struct Totals {
  uint64_t hours = 0;
  uint64_t records = 0;
  HourCounts counts;
  uint64_t payload_bytes = 0;
  uint64_t file_bytes = 0;
};

void PrintHourText(const DumpContext& ctx, const HourSummary& hour, const HourCounts& counts) {
  char line[256];
  std::string earliest = hour.records ? IsoMs(hour.min_deliver_at_ms) : "-";
  std::string latest = hour.records ? IsoMs(hour.max_deliver_at_ms) : "-";
  std::snprintf(line, sizeof(line), "  %-13s %10llu %12llu %12llu  %-24s  %-24s %10llu\n",
                hour.name.c_str(), static_cast<unsigned long long>(hour.records),
                static_cast<unsigned long long>(hour.payload_bytes),
                static_cast<unsigned long long>(hour.data_bytes + hour.index_bytes),
                earliest.c_str(), latest.c_str(),
                static_cast<unsigned long long>(counts.delivered));
  ctx.out << line;
  if (hour.records) {
    ctx.out << "  " << std::string(13, ' ') << "  ms: " << hour.min_deliver_at_ms << " .. "
            << hour.max_deliver_at_ms << '\n';
  }
  if (counts.cancels > 0 || counts.cancelled > 0) {
    ctx.out << "  " << std::string(13, ' ') << "  cancels: " << counts.cancels
            << ", records cancelled: " << counts.cancelled << '\n';
  }
  // What a write in progress looks like (or a crash the next bridge start repairs).
  if (hour.index_tail_bytes > 0) {
    ctx.out << "    note: " << hour.index_file << " ends with " << hour.index_tail_bytes
            << " bytes of a partial entry: being written right now, or torn\n";
  }
  if (hour.unindexed_data_bytes > 0) {
    ctx.out << "    note: " << hour.data_file << " has " << hour.unindexed_data_bytes
            << " bytes after the last indexed record: being written right now, torn, or "
            << "records whose entries a crash lost (opening the store indexes them again)\n";
  }
  if (hour.bad_entries > 0) {
    ctx.out << "    DAMAGED: " << hour.bad_entries << " index entries fail their checksum "
            << "(run --verify)\n";
  }
}

// The counts after records: delivered, pending, cancels, cancelled.
void JsonCounts(JsonLine* line, const HourCounts& counts) {
  line->Uint("delivered", counts.delivered)
      .Uint("pending", counts.pending)
      .Uint("cancels", counts.cancels)
      .Uint("cancelled", counts.cancelled);
}

void PrintHourJson(const DumpContext& ctx, const std::string& store, const HourSummary& hour,
                   const HourCounts& counts) {
  JsonLine line("hour");
  line.Str("store", store).Str("hour", hour.name).Uint("records", hour.records);
  JsonCounts(&line, counts);
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
    JsonLine line("total");
    line.Str("store", store).Uint("hours", totals.hours).Uint("records", totals.records);
    JsonCounts(&line, totals.counts);
    ctx.Emit(
        line.Uint("payload_bytes", totals.payload_bytes).Uint("file_bytes", totals.file_bytes));
    return;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "  %-13s %10llu %12llu %12llu  %-24s  %-24s %10llu\n", "total",
                static_cast<unsigned long long>(totals.records),
                static_cast<unsigned long long>(totals.payload_bytes),
                static_cast<unsigned long long>(totals.file_bytes), "", "",
                static_cast<unsigned long long>(totals.counts.delivered));
  ctx.out << line << "  " << totals.hours << " hour files, " << totals.counts.pending
          << " records pending";
  // Only a store holding cancels says so: the line stays as it was for every other.
  if (totals.counts.cancels > 0 || totals.counts.cancelled > 0) {
    ctx.out << ", " << totals.counts.cancelled << " cancelled, " << totals.counts.cancels
            << " cancels";
  }
  ctx.out << '\n';
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
    Result<HourCounts> counts = CountHour(reader, epoch_hour, cp);
    if (!counts.ok()) {
      exit_code = std::max(exit_code, ReportFailure(ctx, store, counts.status()));
      continue;
    }
    if (hour->bad_entries > 0) exit_code = std::max(exit_code, kExitDamaged);
    totals.hours += 1;
    totals.records += hour->records;
    totals.counts.delivered += counts->delivered;
    totals.counts.pending += counts->pending;
    totals.counts.cancels += counts->cancels;
    totals.counts.cancelled += counts->cancelled;
    totals.payload_bytes += hour->payload_bytes;
    totals.file_bytes += hour->data_bytes + hour->index_bytes;
    if (ctx.options.json) {
      PrintHourJson(ctx, store, *hour, *counts);
    } else {
      PrintHourText(ctx, *hour, *counts);
    }
  }
  PrintTotals(ctx, store, totals);
  if (checkpoint.ok()) PrintCheckpoint(ctx, store, cp);
  return exit_code;
}

}  // namespace delaybridge::dump
