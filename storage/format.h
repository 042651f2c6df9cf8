// The DelayLog on-disk format, version 1: every constant of docs/storage-format.md (same
// names), and encoders/decoders for each fixed-size structure. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "storage/coding.h"
#include "storage/crc32c.h"

namespace delaybridge::storage {

inline constexpr uint32_t kFormatVersion = 1;

inline constexpr uint32_t kDataMagic = 0x474C4244;        // "DBLG"
inline constexpr uint32_t kIndexMagic = 0x58494244;       // "DBIX"
inline constexpr uint32_t kHeadsMagic = 0x44484244;       // "DBHD"
inline constexpr uint32_t kCheckpointMagic = 0x50434244;  // "DBCP"

inline constexpr int64_t kMsPerSecond = 1000;
inline constexpr int64_t kSecondsPerHour = 3600;
inline constexpr int64_t kMsPerHour = kMsPerSecond * kSecondsPerHour;
inline constexpr int64_t kMaxDeliverAtMs = 253402300800000;  // 10000-01-01T00:00:00Z

inline constexpr size_t kFileHeaderSize = 24;
inline constexpr size_t kRecordHeaderSize = 16;
inline constexpr size_t kIndexEntrySize = 32;
inline constexpr uint32_t kNoEntry = 0xFFFFFFFF;
inline constexpr uint64_t kMaxEntriesPerHour = 0xFFFFFFFE;
inline constexpr size_t kHeadsSlotHeaderSize = 24;
inline constexpr size_t kHeadsSlotSize = kHeadsSlotHeaderSize + kSecondsPerHour * 8;  // 28824
inline constexpr size_t kHeadsFileSize = kFileHeaderSize + 2 * kHeadsSlotSize;        // 57672
// The checkpoint file has a version of its own: two slots since version 2.
inline constexpr uint32_t kCheckpointVersion = 2;
inline constexpr size_t kCheckpointV1FileSize = 40;  // version 1: one record, replaced whole
inline constexpr size_t kCheckpointSlotSize = 48;
// Slot 1 starts a page (and so a device sector) after slot 0: a write torn by a power cut damages
// the sector it was writing, whole on some devices, and that sector holds one slot only.
inline constexpr size_t kCheckpointSlotStride = 4096;
inline constexpr size_t kCheckpointFileSize = kCheckpointSlotStride + kCheckpointSlotSize;  // 4144
inline uint64_t CheckpointSlotOffset(uint64_t generation) {
  return (generation % 2) * kCheckpointSlotStride;
}

inline constexpr size_t kWriteBufferBytes = 131072;
inline constexpr size_t kIndexBufferBytes = 32768;
inline constexpr uint64_t kHeadsSaveEveryEntries = 65536;

static_assert(kHeadsSlotSize == 28824 && kHeadsFileSize == 57672);

// Floor division, so that times before an hour boundary never round up into it.
inline int64_t HourOfMs(int64_t deliver_at_ms) {
  int64_t q = deliver_at_ms / kMsPerHour;
  return (deliver_at_ms % kMsPerHour < 0) ? q - 1 : q;
}
inline int64_t SecondOfMs(int64_t deliver_at_ms) {
  int64_t q = deliver_at_ms / kMsPerSecond;
  return (deliver_at_ms % kMsPerSecond < 0) ? q - 1 : q;
}
inline int64_t HourOfSecond(int64_t epoch_second) {
  int64_t q = epoch_second / kSecondsPerHour;
  return (epoch_second % kSecondsPerHour < 0) ? q - 1 : q;
}
// Index of epoch_second inside its hour's head table, 0..3599.
inline uint32_t SecondInHour(int64_t epoch_second) {
  return static_cast<uint32_t>(epoch_second - HourOfSecond(epoch_second) * kSecondsPerHour);
}

// ---- File header (all three hour files) ----

struct FileHeader {
  uint32_t magic = 0;
  uint32_t version = 0;
  int64_t epoch_hour = 0;
};

std::string EncodeFileHeader(uint32_t magic, int64_t epoch_hour);
// Checks magic, CRC, version (newer -> a message saying so) and hour; file names the file
// in messages. bytes must hold kFileHeaderSize bytes.
Status CheckFileHeader(std::string_view bytes, uint32_t expected_magic, int64_t expected_hour,
                       const std::string& file);

// ---- Data record header ----

struct RecordHeader {
  uint32_t length = 0;
  uint32_t crc = 0;
  int64_t deliver_at_ms = 0;
};

// CRC of a record: over the length, the delivery time and the payload. Inline: every append
// computes one, the two fields from registers, the payload in one call to the implementation.
inline uint32_t RecordCrc(uint32_t length, int64_t deliver_at_ms, std::string_view payload) {
  uint32_t crc = crc32c::ExtendLittleEndian32(0, length);
  crc = crc32c::ExtendLittleEndian64(crc, static_cast<uint64_t>(deliver_at_ms));
  return crc32c::Extend(crc, payload.data(), payload.size());
}

// The header of a record holding payload, due at deliver_at_ms.
inline RecordHeader RecordHeaderFor(int64_t deliver_at_ms, std::string_view payload) {
  const auto length = static_cast<uint32_t>(payload.size());
  return {length, RecordCrc(length, deliver_at_ms, payload), deliver_at_ms};
}

// Writes kRecordHeaderSize bytes. Inline, as EncodeIndexEntry: every append calls both, and
// inlined their fields go from registers to the buffer instead of through a struct in memory.
inline void EncodeRecordHeader(const RecordHeader& header, char* dst) {
  EncodeFixed32(dst, header.length);
  EncodeFixed32(dst + 4, header.crc);
  EncodeFixed64(dst + 8, static_cast<uint64_t>(header.deliver_at_ms));
}
RecordHeader DecodeRecordHeader(const char* src);

// ---- Index entry ----

struct IndexEntry {
  int64_t deliver_at_ms = 0;
  uint64_t log_offset = 0;
  uint32_t size = 0;  // payload length
  uint32_t record_crc = 0;
  uint32_t pre_index = kNoEntry;
};

// Writes kIndexEntrySize bytes.
inline void EncodeIndexEntry(const IndexEntry& entry, char* dst) {
  EncodeFixed64(dst, static_cast<uint64_t>(entry.deliver_at_ms));
  EncodeFixed64(dst + 8, entry.log_offset);
  EncodeFixed32(dst + 16, entry.size);
  EncodeFixed32(dst + 20, entry.record_crc);
  EncodeFixed32(dst + 24, entry.pre_index);
  // From the fields, not from dst (no load waits for the stores above). The record's checksum
  // and the chain link, known last (the link often behind a cache miss on the head table), are
  // the last step, so the three before it run meanwhile.
  uint32_t crc = crc32c::ExtendLittleEndian64(0, static_cast<uint64_t>(entry.deliver_at_ms));
  crc = crc32c::ExtendLittleEndian64(crc, entry.log_offset);
  crc = crc32c::ExtendLittleEndian32(crc, entry.size);
  crc = crc32c::ExtendLittleEndian64(crc, entry.record_crc | uint64_t{entry.pre_index} << 32);
  EncodeFixed32(dst + 28, crc);
}
// Decodes src; returns false when its entry_crc does not match.
bool DecodeIndexEntry(const char* src, IndexEntry* entry);
inline uint64_t IndexEntryOffset(uint64_t position) {
  return kFileHeaderSize + position * kIndexEntrySize;
}

// ---- Head table ----

struct HeadCell {
  uint32_t head = kNoEntry;  // position of the newest entry of the second
  uint32_t count = 0;        // length of the second's chain
};
using HeadCells = std::array<HeadCell, kSecondsPerHour>;

// The chain rule every writer and reader of an index applies, in entry order (the "Index file"
// and "Head table" sections of docs/storage-format.md): an entry's pre_index is the head of its
// second's cell, and adding it makes it the head; its ordinal is the count before it.
inline HeadCell& CellOf(HeadCells& cells, int64_t deliver_at_ms) {
  return cells[SecondInHour(SecondOfMs(deliver_at_ms))];
}
inline const HeadCell& CellOf(const HeadCells& cells, int64_t deliver_at_ms) {
  return cells[SecondInHour(SecondOfMs(deliver_at_ms))];
}
// Adds the entry at position to its cell's chain; returns the entry's ordinal.
inline uint32_t LinkEntry(HeadCell* cell, uint64_t position) {
  const uint32_t ordinal = cell->count;
  cell->head = static_cast<uint32_t>(position);
  cell->count += 1;
  return ordinal;
}

struct HeadsSlot {
  uint64_t generation = 0;
  uint64_t covered = 0;
  HeadCells cells;
};

std::string EncodeHeadsSlot(const HeadsSlot& slot);  // kHeadsSlotSize bytes
// Decodes kHeadsSlotSize bytes; false when the slot CRC does not match.
bool DecodeHeadsSlot(std::string_view bytes, HeadsSlot* slot);
inline uint64_t HeadsSlotOffset(uint64_t generation) {
  return kFileHeaderSize + (generation % 2) * kHeadsSlotSize;
}

}  // namespace delaybridge::storage
