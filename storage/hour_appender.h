// HourAppender: the open append handle of one delivery hour. It buffers records and index
// entries in user space, keeps the hour's head table in memory, and performs its share of a
// group commit (docs/storage-format.md "Writing and the sync order"). DelayLogStore keeps at
// most max_open_hours of them (LRU). Thread-safety: one owner thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "storage/append_buffer.h"
#include "storage/format.h"
#include "storage/hour_files.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

// What survives of an hour between appenders: enough to reopen it.
struct HourState {
  uint64_t entries = 0;     // index entries
  uint64_t data_bytes = 0;  // data file size, header included
};

class HourAppender {
 public:
  // Creates the files of a new hour (headers written, not yet synced: the caller must fsync
  // the directory before claiming durability).
  static Result<std::unique_ptr<HourAppender>> Create(const std::string& dir, int64_t epoch_hour);
  // Reopens an existing hour whose saved head table covers every entry (the invariant of an
  // hour that is not open; see the format doc). Rebuilds the table from the index otherwise.
  static Result<std::unique_ptr<HourAppender>> Reopen(const std::string& dir, int64_t epoch_hour,
                                                      const HourState& state);

  // Appends one record; returns its ordinal in its second. deliver_at_ms must be in this hour.
  // On error nothing was appended (buffers the record would overfill are written before, never
  // after, it joins them), so the caller may try the same record again, e.g. once a full disk
  // has room.
  Result<uint32_t> Append(int64_t deliver_at_ms, std::string_view payload);

  // write()s the buffers, data first.
  Status Flush();
  // Group commit, in two phases (DelayLogStore::BeginSync / FinishSync):
  // StartSync (owner thread) writes the buffers and hands out descriptors (dup'ed, or freshly
  // opened when parked) that another thread may fdatasync while this appender goes on
  // appending, or is parked or destroyed: the data file's always, the index file's only when
  // a head table will be saved over it (the records are what is durable; recovery rebuilds
  // index entries from them). The hour is then no longer dirty but sync_in_flight(); appends
  // made from now on make it dirty again for the next sync. If the head table is due
  // (kHeadsSaveEveryEntries entries not covered), a snapshot of it, covering exactly the entries
  // this sync makes durable, is kept for FinishSync, and the index is synced too; a parked hour
  // always syncs its index, since it is closed (its table saved) once the sync finishes.
  // FinishSync (owner thread, after every fdatasync of that sync succeeded) saves that snapshot.
  Status StartSync(std::vector<PosixFile>* files);
  Status FinishSync();
  // Undoes a StartSync whose sync will not run (another hour could not start): the hour is dirty
  // again, for the next sync, and its snapshot is dropped.
  void AbortSync();
  bool sync_in_flight() const { return sync_in_flight_; }
  // Flushes, syncs data and index (also when a sync of them is in flight elsewhere: the table
  // saved next must not wait for it), saves the head table: the hour may then be forgotten.
  Status Close();

  // Parking releases the file descriptors and buffers of an hour that still has appends not
  // known to be durable (dirty, or covered by a sync in flight), keeping only its head table, so
  // that LRU eviction costs no fdatasync: the next group commit syncs parked hours through fresh
  // descriptors (fdatasync applies to the file, whichever descriptor wrote its pages), and the
  // one in flight already holds its own. Unpark reopens the descriptors.
  Status Park();
  Status Unpark();
  bool parked() const { return !data_.is_open(); }

  bool dirty() const { return dirty_; }
  // Every index entry is synced: a head table covering them all may be saved (Close), and the
  // hour may be forgotten without a sync.
  bool index_synced() const { return index_synced_entries_ == entries_; }
  const HeadCells& cells() const { return *cells_; }
  HourState state() const { return {entries_, data_bytes_}; }
  const PosixFile& data_file() const { return data_; }
  const PosixFile& index_file() const { return index_; }
  uint64_t last_used() const { return last_used_; }
  void set_last_used(uint64_t tick) { last_used_ = tick; }

 private:
  HourAppender(std::string dir, int64_t epoch_hour);
  // Adds the record to the data buffer, which has room for it; returns its checksum.
  uint32_t BufferRecord(int64_t deliver_at_ms, std::string_view payload);
  // Append's path when a buffer lacks room for the record or its entry: writes both buffers,
  // then buffers the record, or writes it directly when it is larger than the buffer. Returns
  // the record's checksum; on error nothing was added.
  Result<uint32_t> AppendRecordAfterFlush(int64_t deliver_at_ms, std::string_view payload);
  // Saves the head table when kHeadsSaveEveryEntries entries are not covered, or when force
  // and anything is not covered. Only valid when every entry is synced.
  Status SaveHeadsIfDue(bool force);
  Status SaveHeads(const HeadsSlot& slot);
  // Appends descriptors of the data and index files that may be fdatasync'ed independently of
  // this appender: dup'ed when open, opened by path when parked (fdatasync applies to the file,
  // whichever descriptor wrote its pages).
  Status DescriptorsToSync(bool with_index, std::vector<PosixFile>* files) const;

  std::string dir_;
  int64_t epoch_hour_;
  HourPaths paths_;
  PosixFile data_;
  PosixFile index_;
  AppendBuffer data_buffer_;    // bytes after data_written_
  AppendBuffer index_buffer_;   // bytes after index_written_
  uint64_t data_written_ = 0;   // data file bytes handed to write()
  uint64_t index_written_ = 0;  // index file bytes handed to write()
  uint64_t data_bytes_ = 0;     // data_written_ + buffered
  uint64_t entries_ = 0;
  std::unique_ptr<HeadCells> cells_;
  uint64_t heads_generation_ = 0;
  uint64_t heads_covered_ = 0;
  bool dirty_ = false;                        // appended or created since the last StartSync
  bool sync_in_flight_ = false;               // StartSync done, FinishSync not yet
  uint64_t index_synced_entries_ = 0;         // index entries known to be fdatasync'ed
  uint64_t index_syncing_entries_ = 0;        // the sync in flight syncs the index up to here
  std::unique_ptr<HeadsSlot> pending_heads_;  // snapshot saved by FinishSync, when due
  uint64_t last_used_ = 0;
};

}  // namespace delaybridge::storage
