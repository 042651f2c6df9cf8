#include "storage/arrival_search.h"

#include "storage/block_cursor.h"
#include "storage/format.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

// Random reads: one page per probe.
constexpr size_t kWindowBytes = 4096;

Result<IndexEntry> EntryAt(BlockCursor* cursor, const PosixFile& index, uint64_t position) {
  std::string_view bytes;
  if (Status s = cursor->Read(IndexEntryOffset(position), kIndexEntrySize, &bytes); !s.ok()) {
    return s;
  }
  IndexEntry entry;
  if (bytes.size() < kIndexEntrySize || !DecodeIndexEntry(bytes.data(), &entry)) {
    return Status::Corruption(index.path() + " at offset " +
                              std::to_string(IndexEntryOffset(position)) + ": entry " +
                              std::to_string(position) + " fails its checksum");
  }
  return entry;
}

}  // namespace

Result<std::optional<FoundRecord>> SearchArrivalOrder(const PosixFile& index, const PosixFile& data,
                                                      uint64_t entries, const ArrivalOrder& order) {
  BlockCursor index_cursor(&index, BlockCursor::Direction::kForward, kWindowBytes);
  BlockCursor data_cursor(&data, BlockCursor::Direction::kForward, kWindowBytes);
  // Reads the record at position and compares it with the one sought.
  const auto probe = [&](uint64_t position, FoundRecord* record) -> Result<int> {
    Result<IndexEntry> entry = EntryAt(&index_cursor, index, position);
    if (!entry.ok()) return entry.status();
    *record = FoundRecord{entry->deliver_at_ms, position, {}};
    if (Status s = ReadRecord(&data_cursor, data.path(), *entry, &record->payload); !s.ok()) {
      return s;
    }
    return order(record->payload);
  };
  uint64_t low = 0;
  uint64_t high = entries;  // the record sought, if present, is in [low, high)
  if (entries > 0) {
    // An hour whose appends all came before (or all after) the record sought is ruled out with
    // one probe: most hours are, when the store spans many.
    FoundRecord last;
    Result<int> where = probe(entries - 1, &last);
    if (!where.ok()) return where.status();
    if (*where == 0) return std::optional<FoundRecord>(std::move(last));
    if (*where > 0) return std::optional<FoundRecord>();
    high = entries - 1;
  }
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    FoundRecord candidate;
    Result<int> where = probe(middle, &candidate);
    if (!where.ok()) return where.status();
    if (*where == 0) return std::optional<FoundRecord>(std::move(candidate));
    if (*where < 0) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return std::optional<FoundRecord>();
}

}  // namespace delaybridge::storage
