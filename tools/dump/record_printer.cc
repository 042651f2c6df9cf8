#include "tools/dump/record_printer.h"

#include "plugin/delayed_record.h"
#include "storage/format.h"
#include "storage/hour_files.h"
#include "tools/dump/byte_preview.h"
#include "tools/dump/dump_time.h"

namespace delaybridge::dump {
namespace {

using plugin::DelayedRecord;
using storage::ChainRecordView;

size_t PreviewLimit(const DumpContext& ctx) { return ctx.options.full ? 0 : kPreviewBytes; }

// Text form of a nullable byte string.
std::string TextBytes(const DumpContext& ctx, const std::optional<std::string>& bytes) {
  if (!bytes) return "null";
  // Appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string&& at -O3.
  std::string text = "\"";
  text += PrintablePreview(*bytes, PreviewLimit(ctx));
  text += "\" (" + std::to_string(bytes->size()) + " bytes)";
  if (ctx.options.hex) text += " hex " + HexBytes(*bytes, PreviewLimit(ctx));
  return text;
}

// Adds name (a JSON string, cut to the preview unless --full, or null), name_bytes, and
// name_hex with --hex.
void JsonBytes(const DumpContext& ctx, JsonLine* line, const std::string& name,
               const std::optional<std::string>& bytes) {
  if (!bytes) {
    line->Null(name);
    return;
  }
  size_t limit = PreviewLimit(ctx);
  std::string_view shown = limit == 0 ? *bytes : std::string_view(*bytes).substr(0, limit);
  line->Str(name, shown).Uint(name + "_bytes", bytes->size());
  line->Bool(name + "_cut", shown.size() < bytes->size());
  if (ctx.options.hex) line->Str(name + "_hex", HexBytes(*bytes, limit));
}

std::string HeadersJson(const DumpContext& ctx, const DelayedRecord& record) {
  std::string json = "[";
  for (const plugin::KafkaHeader& header : record.headers) {
    if (json.size() > 1) json += ',';
    json += "{\"name\":" + JsonString(header.name) + ",\"value\":";
    json += header.value ? JsonString(*header.value) : "null";
    if (ctx.options.hex && header.value)
      json += ",\"value_hex\":\"" + HexBytes(*header.value, 0) + "\"";
    json += '}';
  }
  return json + "]";
}

struct Location {
  std::string hour;
  std::string data_file;
  std::string index_file;
  int64_t second = 0;
  bool delivered = false;
};

Location LocationOf(const std::string& store, const ChainRecordView& record,
                    const MaybeCheckpoint& checkpoint) {
  int64_t epoch_hour = storage::HourOfMs(record.entry.deliver_at_ms);
  storage::HourPaths paths = storage::PathsOfHour(store, epoch_hour);
  return {storage::HourName(epoch_hour), paths.data, paths.index,
          storage::SecondOfMs(record.entry.deliver_at_ms),
          IsDelivered(checkpoint, record.entry.deliver_at_ms, record.ordinal)};
}

int PrintJson(const DumpContext& ctx, const std::string& store, const ChainRecordView& record,
              const Location& at, const Result<DelayedRecord>& decoded) {
  JsonLine line("record");
  line.Str("store", store).Str("hour", at.hour).Int("second", at.second);
  line.Uint("ordinal", record.ordinal)
      .Int("deliver_at_ms", record.entry.deliver_at_ms)
      .Str("deliver_at", IsoMs(record.entry.deliver_at_ms))
      .Bool("delivered", at.delivered);
  line.Str("data_file", at.data_file).Uint("log_offset", record.entry.log_offset);
  line.Str("index_file", at.index_file)
      .Uint("index_entry", record.position)
      .Uint("index_offset", storage::IndexEntryOffset(record.position))
      .Uint("payload_bytes", record.entry.size);
  if (!record.status.ok()) {
    ctx.Emit(line.Str("damaged", record.status.ToString()));
    return kExitDamaged;
  }
  if (!decoded.ok()) {
    ctx.Emit(line.Str("damaged", decoded.status().ToString()));
    return kExitDamaged;
  }
  line.Str("target_topic", decoded->target_topic)
      .Str("source_topic", decoded->source_topic)
      .Int("source_partition", decoded->source_partition)
      .Int("source_offset", decoded->source_offset)
      .Int("source_timestamp_ms", decoded->source_timestamp_ms)
      .Int("requested_deliver_at_ms", decoded->requested_deliver_at_ms);
  JsonBytes(ctx, &line, "key", decoded->key);
  JsonBytes(ctx, &line, "value", decoded->value);
  ctx.Emit(line.Raw("headers", HeadersJson(ctx, decoded.value())));
  return kExitOk;
}

int PrintText(const DumpContext& ctx, const ChainRecordView& record, const Location& at,
              const Result<DelayedRecord>& decoded) {
  std::ostream& out = ctx.out;
  out << "  " << IsoMs(record.entry.deliver_at_ms) << " (" << record.entry.deliver_at_ms
      << " ms)  second " << at.second << " ordinal " << record.ordinal << "  "
      << (at.delivered ? "delivered" : "PENDING") << '\n';
  out << "    at " << at.data_file << " offset " << record.entry.log_offset << " ("
      << record.entry.size << " payload bytes), index entry " << record.position << " at "
      << at.index_file << " offset " << storage::IndexEntryOffset(record.position) << '\n';
  if (!record.status.ok()) {
    out << "    DAMAGED: " << record.status.ToString() << '\n';
    return kExitDamaged;
  }
  if (!decoded.ok()) {
    out << "    DAMAGED: payload does not decode: " << decoded.status().ToString() << '\n';
    return kExitDamaged;
  }
  out << "    target " << decoded->target_topic << "  source " << decoded->SourceId()
      << "  requested " << IsoMs(decoded->requested_deliver_at_ms) << '\n';
  out << "    key     " << TextBytes(ctx, decoded->key) << '\n';
  out << "    value   " << TextBytes(ctx, decoded->value) << '\n';
  for (const plugin::KafkaHeader& header : decoded->headers) {
    out << "    header  " << PrintablePreview(header.name, 0) << " = "
        << TextBytes(ctx, header.value) << '\n';
  }
  return kExitOk;
}

}  // namespace

int PrintRecord(const DumpContext& ctx, const std::string& store, const ChainRecordView& record,
                const MaybeCheckpoint& checkpoint) {
  Location at = LocationOf(store, record, checkpoint);
  Result<DelayedRecord> decoded = record.status.ok() ? plugin::DecodeDelayedRecord(record.payload)
                                                     : Result<DelayedRecord>(record.status);
  if (ctx.options.json) return PrintJson(ctx, store, record, at, decoded);
  return PrintText(ctx, record, at, decoded);
}

}  // namespace delaybridge::dump
