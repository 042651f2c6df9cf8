// Walking one second's reverse-linked index chain (docs/storage-format.md "Index file") and
// reading the records it points to, verifying every checksum. Shared by DelayLogStore and
// DelayLogReader. Free functions; the files belong to the caller's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/block_cursor.h"
#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

struct ChainEntry {
  uint32_t position = 0;  // entry number in the index
  uint32_t ordinal = 0;   // position in the chain, arrival order
  IndexEntry entry;
};

// Follows the chain of epoch_second from cell.head through pre_index and stores its entries
// in arrival order. Only the first entries_in_index entries of the index exist. A broken
// link (bad entry checksum, wrong second, a link that does not go backwards, a length other
// than cell.count) is a Corruption naming the index file and offset; *out then holds the
// entries reached before the break, with their true ordinals.
Status WalkChain(const PosixFile& index, int64_t epoch_second, const HeadCell& cell,
                 uint64_t entries_in_index, std::vector<ChainEntry>* out);

// Reads the record entry describes from data and checks it against the entry and its CRC;
// Corruption naming the data file and offset when anything disagrees.
Status ReadRecord(BlockCursor* data, const std::string& data_path, const IndexEntry& entry,
                  std::string* payload);

// WalkChain, then ReadRecord for each entry: appends every good record to out in arrival
// order and returns the first problem found (after appending the good ones), except that an
// error that is not damage (it may pass) outranks damage: the second is then read again.
Status ReadSecondChain(const PosixFile& index, const PosixFile& data, int64_t epoch_second,
                       const HeadCell& cell, uint64_t entries_in_index,
                       std::vector<StoredRecord>* out);

}  // namespace delaybridge::storage
