// Finding one record of an hour by a key that grows with arrival order, by binary search over
// the hour's index entries (docs/storage-format.md "Index file": entries are in arrival order).
// The store knows nothing of the key: the caller reads it from the payload. The bridge uses the
// source offset, which grows with arrival because a partition is read in order, to find a
// cancel's target. O(log entries) index entries and records read; nothing kept in memory.
// Free functions; the files belong to the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

struct FoundRecord {
  int64_t deliver_at_ms = 0;
  uint64_t position = 0;  // entry number in the hour's index
  std::string payload;
};

// Where the record sought lies relative to the one whose payload is given: negative before it,
// zero this is it, positive after it. Must not decrease along arrival order where it is used
// (a record whose key cannot be read should answer as its neighbours would, or nonzero).
using ArrivalOrder = std::function<int(std::string_view payload)>;

// Binary search over the first `entries` entries of index (and their records in data). nullopt
// when no record compares equal. A damaged entry or record on the search path is Corruption
// naming the file and offset; an I/O error is returned as it is.
Result<std::optional<FoundRecord>> SearchArrivalOrder(const PosixFile& index, const PosixFile& data,
                                                      uint64_t entries, const ArrivalOrder& order);

}  // namespace delaybridge::storage
