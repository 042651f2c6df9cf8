#include "plugin/delayed_record.h"

#include <array>
#include <charconv>
#include <cstring>
#include <limits>

namespace delaybridge::plugin {

namespace {

// Length prefix meaning "null" for nullable byte strings (as in Kafka's protocol, -1).
constexpr uint32_t kNullLength = 0xFFFFFFFFu;

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Fixed(v, 4); }
  void U64(uint64_t v) { Fixed(v, 8); }
  void Bytes(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_->append(s);
  }
  void NullableBytes(std::optional<std::string_view> s) {
    if (!s) return U32(kNullLength);
    Bytes(*s);
  }

 private:
  void Fixed(uint64_t v, int bytes) {  // little-endian
    char buf[8];
    for (int i = 0; i < bytes; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    out_->append(buf, static_cast<size_t>(bytes));
  }
  std::string* out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool U8(uint8_t* v) {
    uint64_t x;
    if (!Fixed(&x, 1)) return false;
    *v = static_cast<uint8_t>(x);
    return true;
  }
  bool U32(uint32_t* v) {
    uint64_t x;
    if (!Fixed(&x, 4)) return false;
    *v = static_cast<uint32_t>(x);
    return true;
  }
  bool U64(uint64_t* v) { return Fixed(v, 8); }
  bool Bytes(std::string_view* s) {
    uint32_t len;
    if (!U32(&len) || len == kNullLength || len > in_.size() - pos_) return false;
    *s = in_.substr(pos_, len);
    pos_ += len;
    return true;
  }
  bool NullableBytes(std::optional<std::string_view>* s) {
    uint32_t len;
    if (!U32(&len)) return false;
    if (len == kNullLength) {
      s->reset();
      return true;
    }
    if (len > in_.size() - pos_) return false;
    s->emplace(in_.substr(pos_, len));
    pos_ += len;
    return true;
  }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  bool Fixed(uint64_t* v, int bytes) {
    if (in_.size() - pos_ < static_cast<size_t>(bytes)) return false;
    uint64_t x = 0;
    for (int i = 0; i < bytes; ++i) {
      x |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += bytes;
    *v = x;
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
};

Status Truncated(const char* field, size_t offset) {
  return Status::Corruption(std::string("delayed record: ") + field +
                            " is truncated or has a bad length at byte " + std::to_string(offset));
}

std::string SourceIdOf(std::string_view topic, int32_t partition, int64_t offset) {
  // Every produced record carries it (x-delay-source): the numbers are written on the stack and
  // the id into a string reserved at its length, which allocates once instead of growing as the
  // parts are appended. Each number has room for its widest value, sign included, so the
  // separator after the first stays inside the array.
  constexpr size_t kPartitionChars = std::numeric_limits<int32_t>::digits10 + 2;  // 11
  constexpr size_t kOffsetChars = std::numeric_limits<int64_t>::digits10 + 2;     // 20
  std::array<char, 1 + kPartitionChars + 1 + kOffsetChars> numbers;
  numbers[0] = '/';
  char* end =
      std::to_chars(numbers.data() + 1, numbers.data() + 1 + kPartitionChars, partition).ptr;
  *end++ = '/';
  end = std::to_chars(end, end + kOffsetChars, offset).ptr;
  std::string id;
  id.reserve(topic.size() + static_cast<size_t>(end - numbers.data()));
  id.append(topic);
  id.append(numbers.data(), end);
  return id;
}

}  // namespace

std::string DelayedRecord::SourceId() const {
  return SourceIdOf(source_topic, source_partition, source_offset);
}

std::string DelayedRecordView::SourceId() const {
  return SourceIdOf(source_topic, source_partition, source_offset);
}

void AppendEncodedHeader(std::string* header_bytes, std::string_view name,
                         std::optional<std::string_view> value) {
  Writer w(header_bytes);
  w.Bytes(name);
  w.NullableBytes(value);
}

std::string EncodeDelayedRecord(const DelayedRecordView& r) {
  std::string out;
  out.reserve(1 + 8 + 8 + 4 + 8 + 4 * 5 + r.source_topic.size() + r.target_topic.size() +
              (r.key ? r.key->size() : 0) + (r.value ? r.value->size() : 0) +
              r.header_bytes.size());
  Writer w(&out);
  w.U8(kDelayedRecordVersion);
  w.U64(static_cast<uint64_t>(r.requested_deliver_at_ms));
  w.U64(static_cast<uint64_t>(r.source_timestamp_ms));
  w.U32(static_cast<uint32_t>(r.source_partition));
  w.U64(static_cast<uint64_t>(r.source_offset));
  w.Bytes(r.source_topic);
  w.Bytes(r.target_topic);
  w.NullableBytes(r.key);
  w.NullableBytes(r.value);
  w.U32(r.header_count);
  out.append(r.header_bytes);
  return out;
}

std::string EncodeDelayedRecord(const DelayedRecord& r) {
  std::string header_bytes;
  for (const auto& h : r.headers) AppendEncodedHeader(&header_bytes, h.name, h.value);
  DelayedRecordView view;
  view.target_topic = r.target_topic;
  view.key = r.key;
  view.value = r.value;
  view.source_topic = r.source_topic;
  view.source_partition = r.source_partition;
  view.source_offset = r.source_offset;
  view.source_timestamp_ms = r.source_timestamp_ms;
  view.requested_deliver_at_ms = r.requested_deliver_at_ms;
  view.header_count = static_cast<uint32_t>(r.headers.size());
  view.header_bytes = header_bytes;
  return EncodeDelayedRecord(view);
}

std::optional<int64_t> PeekSourceOffset(std::string_view bytes) {
  // version, requested_deliver_at_ms, source_timestamp_ms, source_partition, then source_offset.
  constexpr size_t kSourceOffsetAt = 1 + 8 + 8 + 4;
  Reader r(bytes.substr(std::min(bytes.size(), kSourceOffsetAt)));
  uint64_t offset = 0;
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kDelayedRecordVersion || !r.U64(&offset)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(offset);
}

Result<DelayedRecordView> ViewDelayedRecord(std::string_view bytes) {
  Reader r(bytes);
  DelayedRecordView rec;
  uint8_t version = 0;
  if (!r.U8(&version)) return Truncated("version", r.pos());
  if (version != kDelayedRecordVersion) {
    return Status::Corruption("delayed record: unknown version " + std::to_string(version) +
                              " (this build reads version " +
                              std::to_string(kDelayedRecordVersion) + ")");
  }
  uint64_t u64 = 0;
  uint32_t u32 = 0;
  if (!r.U64(&u64)) return Truncated("requested_deliver_at_ms", r.pos());
  rec.requested_deliver_at_ms = static_cast<int64_t>(u64);
  if (!r.U64(&u64)) return Truncated("source_timestamp_ms", r.pos());
  rec.source_timestamp_ms = static_cast<int64_t>(u64);
  if (!r.U32(&u32)) return Truncated("source_partition", r.pos());
  rec.source_partition = static_cast<int32_t>(u32);
  if (!r.U64(&u64)) return Truncated("source_offset", r.pos());
  rec.source_offset = static_cast<int64_t>(u64);
  if (!r.Bytes(&rec.source_topic)) return Truncated("source_topic", r.pos());
  if (!r.Bytes(&rec.target_topic)) return Truncated("target_topic", r.pos());
  if (!r.NullableBytes(&rec.key)) return Truncated("key", r.pos());
  if (!r.NullableBytes(&rec.value)) return Truncated("value", r.pos());
  if (!r.U32(&rec.header_count)) return Truncated("header count", r.pos());
  // Each header takes at least 8 bytes.
  if (rec.header_count > (bytes.size() - r.pos()) / 8) return Truncated("header count", r.pos());
  const size_t headers_at = r.pos();
  for (uint32_t i = 0; i < rec.header_count; ++i) {
    std::string_view name;
    std::optional<std::string_view> value;
    if (!r.Bytes(&name)) return Truncated("header name", r.pos());
    if (!r.NullableBytes(&value)) return Truncated("header value", r.pos());
  }
  if (!r.at_end()) {
    return Status::Corruption("delayed record: " + std::to_string(bytes.size() - r.pos()) +
                              " unexpected bytes after the last header at byte " +
                              std::to_string(r.pos()));
  }
  rec.header_bytes = bytes.substr(headers_at);
  return rec;
}

DelayedRecord ToDelayedRecord(const DelayedRecordView& view) {
  const auto copy = [](const std::optional<std::string_view>& s) {
    return s ? std::optional<std::string>(std::in_place, *s) : std::nullopt;
  };
  DelayedRecord rec;
  rec.target_topic = view.target_topic;
  rec.key = copy(view.key);
  rec.value = copy(view.value);
  rec.source_topic = view.source_topic;
  rec.source_partition = view.source_partition;
  rec.source_offset = view.source_offset;
  rec.source_timestamp_ms = view.source_timestamp_ms;
  rec.requested_deliver_at_ms = view.requested_deliver_at_ms;
  rec.headers.reserve(view.header_count);
  view.ForEachHeader(
      [&rec, &copy](std::string_view name, const std::optional<std::string_view>& value) {
        rec.headers.push_back(KafkaHeader{std::string(name), copy(value)});
      });
  return rec;
}

Result<DelayedRecord> DecodeDelayedRecord(std::string_view bytes) {
  auto view = ViewDelayedRecord(bytes);
  if (!view.ok()) return view.status();
  return ToDelayedRecord(*view);
}

namespace delayed_record_internal {

void NextHeader(std::string_view bytes, size_t* pos, std::string_view* name,
                std::optional<std::string_view>* value) {
  Reader r(bytes.substr(*pos));
  // Checked when the view was made: both reads succeed.
  r.Bytes(name);
  r.NullableBytes(value);
  *pos += r.pos();
}

}  // namespace delayed_record_internal

}  // namespace delaybridge::plugin
