#include "tools/dump/record_printer.h"

#include <variant>

#include "storage/format.h"
#include "storage/hour_files.h"
#include "tools/dump/byte_preview.h"
#include "tools/dump/dump_time.h"

namespace delaybridge::dump {
namespace {

using plugin::DelayedRecord;
using plugin::StoredCancel;
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

// What the first text line says about the record: its delivered state, or what it is.
std::string StateText(const Location& at, const Result<StoredPayload>& decoded, bool cancelled) {
  if (decoded.ok()) {
    if (const auto* cancel = std::get_if<StoredCancel>(&decoded.value())) {
      return "CANCEL of " + cancel->TargetId();
    }
  }
  if (cancelled) return "CANCELLED";
  return at.delivered ? "delivered" : "PENDING";
}

// A Kafka timestamp, -1 when the record had none.
std::string TimestampText(int64_t timestamp_ms) {
  return timestamp_ms < 0 ? "none" : IsoMs(timestamp_ms);
}

void JsonDelayedRecord(const DumpContext& ctx, JsonLine* line, const DelayedRecord& record,
                       bool cancelled) {
  line->Bool("cancelled", cancelled)
      .Str("target_topic", record.target_topic)
      .Str("source_topic", record.source_topic)
      .Int("source_partition", record.source_partition)
      .Int("source_offset", record.source_offset)
      .Int("source_timestamp_ms", record.source_timestamp_ms)
      .Int("requested_deliver_at_ms", record.requested_deliver_at_ms);
  JsonBytes(ctx, line, "key", record.key);
  JsonBytes(ctx, line, "value", record.value);
  line->Raw("headers", HeadersJson(ctx, record));
}

// A cancel's source fields are its own (the x-delay-cancel record's), as --find-source matches.
void JsonCancel(JsonLine* line, const StoredCancel& cancel) {
  line->Str("cancels", cancel.TargetId())
      .Int("cancels_offset", cancel.target_offset)
      .Str("source_topic", cancel.source_topic)
      .Int("source_partition", cancel.source_partition)
      .Int("source_offset", cancel.cancel_offset)
      .Int("source_timestamp_ms", cancel.cancel_timestamp_ms);
}

int PrintJson(const DumpContext& ctx, const std::string& store, const ChainRecordView& record,
              const Location& at, const Result<StoredPayload>& decoded, bool cancelled) {
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
  line.Str("kind", KindName(record.status, record.payload));
  // Unreadable (the read status) or undecodable.
  if (!decoded.ok()) {
    ctx.Emit(line.Str("damaged", decoded.status().ToString()));
    return kExitDamaged;
  }
  if (const auto* cancel = std::get_if<StoredCancel>(&decoded.value())) {
    JsonCancel(&line, *cancel);
  } else {
    JsonDelayedRecord(ctx, &line, std::get<DelayedRecord>(decoded.value()), cancelled);
  }
  ctx.Emit(line);
  return kExitOk;
}

void TextDelayedRecord(const DumpContext& ctx, const DelayedRecord& record) {
  std::ostream& out = ctx.out;
  out << "    target " << record.target_topic << "  source " << record.SourceId() << "  requested "
      << IsoMs(record.requested_deliver_at_ms) << '\n';
  out << "    key     " << TextBytes(ctx, record.key) << '\n';
  out << "    value   " << TextBytes(ctx, record.value) << '\n';
  for (const plugin::KafkaHeader& header : record.headers) {
    out << "    header  " << PrintablePreview(header.name, 0) << " = "
        << TextBytes(ctx, header.value) << '\n';
  }
}

int PrintText(const DumpContext& ctx, const ChainRecordView& record, const Location& at,
              const Result<StoredPayload>& decoded, bool cancelled) {
  std::ostream& out = ctx.out;
  out << "  " << IsoMs(record.entry.deliver_at_ms) << " (" << record.entry.deliver_at_ms
      << " ms)  second " << at.second << " ordinal " << record.ordinal << "  "
      << StateText(at, decoded, cancelled) << '\n';
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
  if (const auto* cancel = std::get_if<StoredCancel>(&decoded.value())) {
    out << "    source " << cancel->SourceId() << "  timestamp "
        << TimestampText(cancel->cancel_timestamp_ms) << '\n';
  } else {
    TextDelayedRecord(ctx, std::get<DelayedRecord>(decoded.value()));
  }
  return kExitOk;
}

}  // namespace

int PrintRecord(const DumpContext& ctx, const std::string& store, const ChainRecordView& record,
                const MaybeCheckpoint& checkpoint, const CancelTargets& cancels) {
  Location at = LocationOf(store, record, checkpoint);
  Result<StoredPayload> decoded = DecodeStoredPayload(record.status, record.payload);
  const auto* delayed = decoded.ok() ? std::get_if<DelayedRecord>(&decoded.value()) : nullptr;
  const bool cancelled = delayed != nullptr && cancels.Cancels(at.second, delayed->source_offset);
  if (ctx.options.json) return PrintJson(ctx, store, record, at, decoded, cancelled);
  return PrintText(ctx, record, at, decoded, cancelled);
}

}  // namespace delaybridge::dump
