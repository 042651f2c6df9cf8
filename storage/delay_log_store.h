// DelayLogStore: one directory of hour-partitioned DelayLog files with per-second
// reverse-linked index chains (format: docs/storage-format.md). The bridge keeps one store
// per delay-topic partition.
//
// A record goes to the data file of the hour it falls due in; its fixed-size index entry links
// to the previous entry of the same second, and a 3600-cell head table per hour holds each
// second's newest entry and count. So walking a second touches only that second's entries,
// and memory holds head tables of at most max_open_hours open hours (plus as many cached ones
// of closed hours) and a few counters per hour file: it does not grow with the record count.
//
// Appends are buffered per hour; Sync() is the group commit that makes all of them durable and
// advances durable_sequence(), which is what the bridge may commit to Kafka. BeginSync /
// FinishSync split it so that the fdatasyncs run on another thread while appends continue. At most
// max_open_hours hour files are held open for appending (LRU); closing one syncs it and saves
// its head table, so appending to any hour always works. Where each hour is in that life (open,
// parked, closed, cached) is the HourTable's (storage/hour_table.h); the order of a group
// commit is this class's.
//
// Thread-safety: none, except PendingSync::Run. One owner thread calls every method of the store;
// the fdatasyncs of a group commit may run on another thread (BeginSync / PendingSync::Run /
// FinishSync), which touches only descriptors the PendingSync owns, so the owner keeps appending
// and reading meanwhile. Use DelayLogReader (storage/delay_log_reader.h) to inspect a store from
// another process or thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "storage/arrival_search.h"

namespace delaybridge::storage {

struct StoreOptions {
  std::string dir;                               // created if missing
  size_t max_open_hours = 64;                    // LRU bound on hour files held open for appending
  uint32_t max_record_bytes = 16 * 1024 * 1024;  // larger payloads are rejected
};

// What Open() found and repaired. Every problem names the file and byte offset.
struct RecoveryReport {
  struct Problem {
    std::string file;
    uint64_t offset = 0;
    std::string what;
  };
  std::vector<Problem> problems;
  uint64_t hours = 0;              // hour files present after recovery
  uint64_t records = 0;            // index entries that survived
  uint64_t truncated_bytes = 0;    // torn tails cut off (data + index)
  uint64_t records_dropped = 0;    // index entries dropped (past data end, bad checksum)
  uint64_t records_reindexed = 0;  // records after the index's end given their entries again
  uint64_t corrupt_records = 0;    // records kept in their chain but failing their checks
};

struct AppendResult {
  int64_t second = 0;     // floor(deliver_at_ms / 1000): the chain the record joined
  uint32_t ordinal = 0;   // 0-based position in that second's chain, in arrival order
  uint64_t sequence = 0;  // store-wide append sequence, starts at 1 for each Open()
};

struct StoredRecord {
  int64_t deliver_at_ms = 0;
  uint32_t ordinal = 0;  // position in its second's chain (arrival order)
  std::string payload;   // the bytes given to Append, verified against their checksum
};

class PosixFile;

// The fdatasyncs of one group commit, taken out of the store by DelayLogStore::BeginSync so that
// they can run on another thread while the store's owner goes on appending. Owns duplicates of
// the descriptors it syncs, so nothing the store does meanwhile (evicting, parking, closing or
// deleting hours) can close or reuse them. Thread-safety: Run() may be called on any thread, once;
// hand the PendingSync and Run()'s status back to FinishSync on the owner thread afterwards
// (with the synchronisation that passes them back, e.g. a join or a future).
class PendingSync {
 public:
  ~PendingSync();
  PendingSync(const PendingSync&) = delete;
  PendingSync& operator=(const PendingSync&) = delete;

  // fdatasyncs every data and index file BeginSync covered, concurrently
  // (storage/parallel_sync.h), then fsyncs the directory when hour files were created. Touches
  // no state of the store. A second call fails with FailedPrecondition.
  Status Run();
  // Every Append with sequence <= this is durable once FinishSync accepts this sync.
  uint64_t covered_sequence() const;
  // Nothing to sync: Run is then a no-op (FinishSync is still required).
  bool empty() const;

 private:
  friend class DelayLogStore;
  PendingSync();
  Status SyncFiles() const;
  std::vector<PosixFile> files_;  // dup'ed or freshly opened: closed by this object
  std::string dir_to_sync_;       // empty when no hour file was created since the last sync
  uint64_t covered_sequence_ = 0;
  const void* store_ = nullptr;  // identifies the store and sync that FinishSync expects
  uint64_t id_ = 0;
  bool ran_ = false;
  Status run_status_;
};

class DelayLogStore {
 public:
  // Opens (creating if needed) the store in options.dir and recovers torn tails; see
  // docs/storage-format.md "Recovery". report may be null.
  static Result<std::unique_ptr<DelayLogStore>> Open(const StoreOptions& options,
                                                     RecoveryReport* report);
  // Close()s, ignoring errors: call Close() to learn about them.
  ~DelayLogStore();

  // Syncs everything, saves the head tables of open hours and releases them. Afterwards only
  // the destructor may be called. A clean Close makes the next Open fast (nothing to verify).
  Status Close();

  // Appends a record to the file of the hour containing deliver_at_ms and links it into its
  // second's chain. Buffered: durable only after a later Sync() returns ok.
  Result<AppendResult> Append(int64_t deliver_at_ms, std::string_view payload);

  // Group commit: makes every append made before the call durable: every dirty data and index
  // file is fdatasync'ed (concurrently), then head tables are saved when due
  // (docs/storage-format.md "Writing and the sync order"). After a failed Sync the store
  // refuses further appends and syncs (a failed fdatasync may have lost pages); reopen it.
  // Same as BeginSync, PendingSync::Run and FinishSync on the calling thread.
  Status Sync();

  // Two-phase group commit, for an owner thread that must not wait for the disk.
  // BeginSync (owner thread) writes every buffered append to the page cache, snapshots the head
  // tables that are due to be saved, and returns the fdatasyncs that make all appends up to
  // last_sequence() durable. The owner may go on calling Append / ReadSecond / CountInSecond /
  // NextNonEmptySecond / DeleteHoursBefore / Hours while Run() executes elsewhere; appends made
  // meanwhile are covered by the next sync.
  // FinishSync (owner thread) takes Run()'s status: ok -> durable_sequence() becomes
  // covered_sequence(), head-table snapshots are saved, parked hours covered by it are closed;
  // failure (or Run not called) -> the store refuses further appends and syncs, as after a
  // failed Sync(). A PendingSync that is not this store's sync in flight is InvalidArgument.
  // At most one PendingSync may be outstanding: BeginSync, Sync and Close return
  // FailedPrecondition while one is. A failed BeginSync also poisons the store.
  Result<std::unique_ptr<PendingSync>> BeginSync();
  Status FinishSync(std::unique_ptr<PendingSync> sync, const Status& run_status);
  bool sync_in_flight() const;

  uint64_t last_sequence() const;     // sequence of the latest Append (0 if none)
  uint64_t durable_sequence() const;  // every Append with sequence <= this is durable

  // Appends to out every record of epoch_second, in arrival order (ordinal 0, 1, ...),
  // with checksums verified. Sees appends not yet synced too. A record failing its checksum
  // is reported as a Corruption status naming file and offset, after the good ones.
  Status ReadSecond(int64_t epoch_second, std::vector<StoredRecord>* out);

  // Finds a record of epoch_hour by binary search over the hour's records in arrival order
  // (storage/arrival_search.h: order must follow arrival order). Sees appends not yet synced
  // too. nullopt when the hour is absent or no record compares equal.
  Result<std::optional<FoundRecord>> FindInHour(int64_t epoch_hour, const ArrivalOrder& order);

  // Number of records in epoch_second's chain (from the head table; no data read).
  Result<uint32_t> CountInSecond(int64_t epoch_second);

  // Number of records placed in from_second or later: the head table of from_second's hour
  // and the entry counts of the later hours (no data read; at most one head table loaded).
  Result<uint64_t> CountFromSecond(int64_t from_second);

  // The first second in [from_second, limit_second) that holds records, or nullopt.
  // Skips whole hours that have no file without touching the disk.
  Result<std::optional<int64_t>> NextNonEmptySecond(int64_t from_second, int64_t limit_second);

  // Retention: deletes every hour file whose whole hour lies before deliver_before_ms.
  Status DeleteHoursBefore(int64_t deliver_before_ms);

  // Hours present, as epoch_ms / 3'600'000, ascending.
  std::vector<int64_t> Hours() const;

  const std::string& dir() const;

 private:
  DelayLogStore() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace delaybridge::storage
