#include "storage/format.h"

#include "storage/coding.h"
#include "storage/crc32c.h"

namespace delaybridge::storage {

std::string EncodeFileHeader(uint32_t magic, int64_t epoch_hour) {
  std::string out;
  PutFixed32(&out, magic);
  PutFixed32(&out, kFormatVersion);
  PutFixed64(&out, static_cast<uint64_t>(epoch_hour));
  PutFixed32(&out, crc32c::Value(out.data(), out.size()));
  PutFixed32(&out, 0);
  return out;
}

Status CheckFileHeader(std::string_view bytes, uint32_t expected_magic, int64_t expected_hour,
                       const std::string& file) {
  if (bytes.size() < kFileHeaderSize) {
    return Status::Corruption(file + ": file header is torn (" + std::to_string(bytes.size()) +
                              " of " + std::to_string(kFileHeaderSize) + " bytes)");
  }
  const char* p = bytes.data();
  uint32_t magic = DecodeFixed32(p);
  uint32_t version = DecodeFixed32(p + 4);
  auto hour = static_cast<int64_t>(DecodeFixed64(p + 8));
  if (magic != expected_magic) {
    return Status::Corruption(file + " at offset 0: bad magic, not a DelayBridge file");
  }
  if (DecodeFixed32(p + 16) != crc32c::Value(p, 16)) {
    return Status::Corruption(file + " at offset 0: file header checksum mismatch");
  }
  if (version > kFormatVersion) {
    return Status::FailedPrecondition(file + ": format version " + std::to_string(version) +
                                      " is newer than this build supports (" +
                                      std::to_string(kFormatVersion) +
                                      "); use a newer DelayBridge");
  }
  if (version == 0) return Status::Corruption(file + " at offset 4: format version 0");
  if (hour != expected_hour) {
    return Status::Corruption(file + " at offset 8: header names hour " + std::to_string(hour) +
                              ", file name names hour " + std::to_string(expected_hour));
  }
  return Status::Ok();
}

RecordHeader DecodeRecordHeader(const char* src) {
  RecordHeader header;
  header.length = DecodeFixed32(src);
  header.crc = DecodeFixed32(src + 4);
  header.deliver_at_ms = static_cast<int64_t>(DecodeFixed64(src + 8));
  return header;
}

bool DecodeIndexEntry(const char* src, IndexEntry* entry) {
  if (DecodeFixed32(src + 28) != crc32c::Value(src, 28)) return false;
  entry->deliver_at_ms = static_cast<int64_t>(DecodeFixed64(src));
  entry->log_offset = DecodeFixed64(src + 8);
  entry->size = DecodeFixed32(src + 16);
  entry->record_crc = DecodeFixed32(src + 20);
  entry->pre_index = DecodeFixed32(src + 24);
  return true;
}

namespace {

uint32_t HeadsSlotCrc(const char* slot) {
  uint32_t crc = crc32c::Value(slot, 16);
  return crc32c::Extend(crc, slot + kHeadsSlotHeaderSize, kHeadsSlotSize - kHeadsSlotHeaderSize);
}

}  // namespace

std::string EncodeHeadsSlot(const HeadsSlot& slot) {
  std::string out(kHeadsSlotSize, '\0');
  char* p = out.data();
  EncodeFixed64(p, slot.generation);
  EncodeFixed64(p + 8, slot.covered);
  for (size_t s = 0; s < slot.cells.size(); ++s) {
    EncodeFixed32(p + kHeadsSlotHeaderSize + 8 * s, slot.cells[s].head);
    EncodeFixed32(p + kHeadsSlotHeaderSize + 8 * s + 4, slot.cells[s].count);
  }
  EncodeFixed32(p + 16, HeadsSlotCrc(p));
  return out;
}

bool DecodeHeadsSlot(std::string_view bytes, HeadsSlot* slot) {
  if (bytes.size() < kHeadsSlotSize) return false;
  const char* p = bytes.data();
  if (DecodeFixed32(p + 16) != HeadsSlotCrc(p)) return false;
  slot->generation = DecodeFixed64(p);
  slot->covered = DecodeFixed64(p + 8);
  for (size_t s = 0; s < slot->cells.size(); ++s) {
    slot->cells[s].head = DecodeFixed32(p + kHeadsSlotHeaderSize + 8 * s);
    slot->cells[s].count = DecodeFixed32(p + kHeadsSlotHeaderSize + 8 * s + 4);
  }
  return true;
}

}  // namespace delaybridge::storage
