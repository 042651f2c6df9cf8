// ReadOnlyHour: the data and index files of one hour, opened read-only with their headers
// checked, as the operators' reader (DelayLogReader) and its verifier (VerifyHourFiles) see
// them; and the scan of an index's entries in order. The store's own reading goes through
// DelayLogStore. Thread-safety: a value; one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "storage/format.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

struct ReadOnlyHour {
  PosixFile data;
  PosixFile index;
  uint64_t data_bytes = 0;  // read after index_bytes: every entry seen has its record inside
  uint64_t index_bytes = 0;
};

// NotFound when a file is missing; Corruption naming the file when a header is incomplete or
// wrong (*bad_file, when given, is set to its path).
Result<ReadOnlyHour> OpenReadOnlyHour(const std::string& dir, int64_t epoch_hour,
                                      std::string* bad_file = nullptr);

// Whole index entries in an index file of this many bytes.
uint64_t WholeEntries(uint64_t index_bytes);

// One index entry as found in the file.
struct IndexEntryView {
  uint32_t position = 0;      // entry number
  uint64_t index_offset = 0;  // byte offset in the index file
  bool checksum_ok = false;   // when false, entry holds no meaningful values
  IndexEntry entry;
};

// Calls visit for entries [0, whole_entries) of index in order; stops early when visit returns
// false, or when the file shrank while being read (cut by the store's recovery).
Status ScanEntries(const PosixFile& index, uint64_t whole_entries,
                   const std::function<bool(const IndexEntryView&)>& visit);

}  // namespace delaybridge::storage
