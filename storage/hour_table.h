// HourTable: the hours of one store and where each is in its life. Every hour present is in the
// table, in exactly one of these states:
//   closed:  its files complete and synced, its head table saved covering every entry; only its
//            HourState is kept, and, while reads use it, its head table (a bounded cache);
//   open:    an HourAppender with both files open, the LRU set of max_open_hours;
//   parked:  evicted from open with appends or index entries no sync has covered yet (or a sync
//            in flight): files closed, head table in memory; a later sync closes it.
// AppenderFor moves closed or parked to open (evicting the least recently used open hour: clean
// to closed, unsynced to parked); FinishSyncs and the eviction of too many parked hours move
// parked to closed; Remove ends any of them. The test builds assert these rules after every
// move. The group commit's order (docs/storage-format.md "Writing and the sync order") is
// DelayLogStore's; StartSyncs, AbortSyncs and FinishSyncs are its steps over the hours.
//
// Thread-safety: none; the store's owner thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/format.h"
#include "storage/hour_appender.h"
#include "storage/open_hour_cache.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

class HourTable {
 public:
  HourTable(std::string dir, size_t max_open_hours);

  // A closed hour found by recovery.
  void AddClosed(int64_t epoch_hour, const HourState& state);
  bool Contains(int64_t epoch_hour) const { return hours_.contains(epoch_hour); }
  // Every hour present, ascending.
  std::vector<int64_t> Hours() const;
  // The first hour present at or after epoch_hour, if any.
  std::optional<int64_t> FirstHourFrom(int64_t epoch_hour) const;
  uint64_t EntriesOf(int64_t epoch_hour) const;

  // The hour's appender, opened (reopened, or created: *created then says the directory needs
  // an fsync) or unparked. A failed eviction of another hour may have lost pages: it is
  // returned and kept as failure(), after which the store must refuse to claim durability.
  // Inline: every append asks, nearly always for an hour in the cache of recent ones.
  Result<HourAppender*> AppenderFor(int64_t epoch_hour, bool* created) {
    *created = false;
    HourAppender* appender = recent_.Find(epoch_hour);
    if (appender == nullptr) [[unlikely]] {
      Result<HourAppender*> opened = OpenHour(epoch_hour, created);
      if (!opened.ok()) return opened;
      appender = *opened;
      recent_.Remember(epoch_hour, appender);
    }
    appender->set_last_used(++tick_);
    return appender;
  }
  // The open appender of the hour, or null when it is not open.
  HourAppender* OpenAppender(int64_t epoch_hour);
  // The hour's head table: the appender's when open or parked, else loaded (and cached) from its
  // heads file, which must cover every entry.
  Result<const HeadCells*> CellsOf(int64_t epoch_hour);
  // Forgets the hour (dropping buffered appends) and removes its files.
  Status Remove(int64_t epoch_hour);

  // Group commit, over the hours: StartSyncs starts the sync of every dirty open hour and every
  // parked hour not yet synced whole, adding the descriptors to sync to *files (on failure the
  // hours started are dirty again); FinishSyncs, after every fdatasync succeeded, saves the
  // head tables due and closes the parked hours it synced whole.
  Status StartSyncs(std::vector<PosixFile>* files);
  void AbortSyncs();
  Status FinishSyncs();
  // Closes every open hour (after the caller's last sync; parked ones were closed by it). No
  // appender is left afterwards, whatever the outcome.
  Status CloseAll();
  // Forgets every appender without closing it: after a failure nothing more may be claimed
  // durable, and recovery at the next open sorts the files out.
  void Abandon();

  const Status& failure() const { return failure_; }

 private:
  // A closed hour's head table, kept for reads.
  struct CachedCells {
    std::unique_ptr<HeadCells> cells;
    uint64_t last_used = 0;
  };

  // AppenderFor without the cache of recent hours and without touching the LRU clock.
  Result<HourAppender*> OpenHour(int64_t epoch_hour, bool* created);
  Status EvictLeastRecentlyUsed();
  // Closes every parked hour (each synced on its own), bounding their memory.
  Status CloseParked();
  // The rules above (test builds only: O(hours)).
  void CheckStates() const;

  const std::string dir_;
  const size_t max_open_hours_;
  std::map<int64_t, HourState> hours_;  // every hour present; state of open ones is stale
  std::map<int64_t, std::unique_ptr<HourAppender>> open_;    // descriptors held, LRU-bounded
  std::map<int64_t, std::unique_ptr<HourAppender>> parked_;  // evicted, not synced whole
  std::map<int64_t, CachedCells> cached_;
  uint64_t tick_ = 0;  // LRU clock
  Status failure_;     // a close during eviction failed
  // Open hours AppenderFor returned, so that appends skip the lookup in open_. Every erase from
  // open_ forgets the hour here.
  OpenHourCache recent_;
};

}  // namespace delaybridge::storage
