// DelayLogReader: a read-only view of a store directory for operators (delaylog-dump) and
// tests. It never creates, truncates or writes a file, so it is safe to use while the bridge
// appends to the same directory: a partial index entry at the end of an index, or data beyond
// the last index entry, is what a write in progress looks like, and is reported as a tail
// rather than treated as a record. Head tables are computed by scanning the index (the saved
// .heads file lags the index by design), so per-second results are exact for what is visible.
//
// Verify() checks everything docs/storage-format.md promises: every header, every index entry
// checksum, every record against its entry and its checksum, records back to back, every chain
// (no link forwards, so no cycles; no link to another second; every entry linked from the next
// entry of its second, so reachable from the head), the saved head tables against the index,
// and the checkpoint. Each problem names the file and byte offset.
//
// Files of a newer format version fail with FailedPrecondition and a message saying so.
//
// Thread-safety: none; one thread uses a reader. Several readers (or a reader and the store)
// may use one directory at once.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/format.h"
#include "storage/hour_verifier.h"
#include "storage/read_only_hour.h"

namespace delaybridge::storage {

struct HourSummary {
  int64_t epoch_hour = 0;
  std::string name;       // "2026-11-22T16" (UTC)
  std::string data_file;  // full paths
  std::string index_file;
  uint64_t records = 0;           // index entries with a valid checksum
  uint64_t bad_entries = 0;       // index entries failing their checksum
  uint64_t data_bytes = 0;        // data file size, header included
  uint64_t index_bytes = 0;       // index file size, header included
  uint64_t payload_bytes = 0;     // sum of the valid entries' payload sizes
  int64_t min_deliver_at_ms = 0;  // over valid entries; meaningful when records > 0
  int64_t max_deliver_at_ms = 0;
  uint64_t index_tail_bytes = 0;      // bytes of a partial last entry (write in progress or torn)
  uint64_t unindexed_data_bytes = 0;  // data after the end of the last indexed record
};

// A record read at an offset of a data file, checked against its own checksum.
struct RecordView {
  uint64_t log_offset = 0;
  uint32_t length = 0;
  int64_t deliver_at_ms = 0;
  std::string payload;
};

// One record of a second's chain, in arrival order.
struct ChainRecordView {
  uint32_t position = 0;  // index entry number
  uint32_t ordinal = 0;   // position in the chain
  IndexEntry entry;
  Status status;        // ok, or the Corruption found reading its record
  std::string payload;  // empty unless status is ok
};

// One record of an hour in index (arrival) order, with its position in its second's chain.
struct HourRecordView {
  IndexEntryView index;
  uint32_t ordinal = 0;  // position in its second's chain
  Status status;         // ok, or the Corruption found reading its record
  std::string payload;   // empty unless status is ok
};

class DelayLogReader {
 public:
  // NotFound when dir does not exist, InvalidArgument when it is not a directory. A directory
  // without any store file opens fine: LooksLikeStore() says so.
  static Result<std::unique_ptr<DelayLogReader>> Open(const std::string& dir);

  // Re-lists the directory (hours appear and disappear while the bridge runs).
  Status Refresh();

  const std::string& dir() const { return dir_; }
  // Hours with a data file, as epoch_ms / 3'600'000, ascending.
  const std::vector<int64_t>& Hours() const { return hours_; }
  bool HasCheckpoint() const { return has_checkpoint_; }
  bool LooksLikeStore() const { return !hours_.empty() || has_checkpoint_; }

  Result<HourSummary> SummarizeHour(int64_t epoch_hour);

  // Calls visit for every whole index entry of the hour in index order; stops early when
  // visit returns false.
  Status ForEachIndexEntry(int64_t epoch_hour,
                           const std::function<bool(const IndexEntryView&)>& visit);

  // Calls visit for every index entry of the hour that passes its checksum and lies in the
  // hour, in index order, with its record: one sequential pass over index and data, which is
  // what a search through every record needs (walking chains reads records out of order).
  // Stops early when visit returns false.
  Status ForEachRecord(int64_t epoch_hour, const std::function<bool(const HourRecordView&)>& visit);

  // Reads and checks the record at log_offset of the hour's data file (Corruption naming the
  // file and offset when it is cut off or fails its checksum).
  Result<RecordView> ReadRecordAt(int64_t epoch_hour, uint64_t log_offset);

  // Record count of each second of the hour (cell s is second epoch_hour * 3600 + s).
  Result<std::array<uint32_t, kSecondsPerHour>> SecondCounts(int64_t epoch_hour);

  // Walks epoch_second's chain from its head and appends its records in arrival order, each
  // with its own status. Returns a Corruption when the chain itself is broken (after
  // appending what was reachable).
  Status ReadSecond(int64_t epoch_second, std::vector<ChainRecordView>* out);

  // Verifies one hour / the whole store, appending problems to *report.
  Status VerifyHour(int64_t epoch_hour, VerifyReport* report);
  Result<VerifyReport> Verify();

 private:
  explicit DelayLogReader(std::string dir) : dir_(std::move(dir)) {}

  // Head table computed from the index, cached while the index size stays the same.
  struct ScannedHour {
    uint64_t index_bytes = 0;
    uint64_t whole_entries = 0;
    HeadCells cells;
  };
  Result<const ScannedHour*> Scan(int64_t epoch_hour);

  std::string dir_;
  std::vector<int64_t> hours_;
  bool has_checkpoint_ = false;
  std::map<int64_t, std::unique_ptr<ScannedHour>> scanned_;
};

}  // namespace delaybridge::storage
