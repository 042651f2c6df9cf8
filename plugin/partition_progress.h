// PartitionProgress: what Kafka must hold so that any instance can take over one delay-topic
// partition (docs/bridge.md, "Kafka holds the truth"). It tracks, for the records this instance
// read from the partition, the three values a new owner needs:
//
//   low watermark L     the lowest source offset whose record is neither delivered nor
//                       dead-lettered: everything below it is finished. It is the offset the
//                       bridge commits, so a new owner starts reading there.
//   late_below LL       every record below this offset that was placed later than the time it
//                       asked for (a late record), or dead-lettered, is finished.
//   ingest_position I   the next offset to read.
//
// A new owner re-reads [L, ...) and skips a record when it asked for a time before the
// delivered checkpoint C and its offset is below LL (ProgressMetadata::Finished). That is
// exact for records placed at the time they asked for (they sort before C, so they were
// delivered), and for late records LL tells: a late record is placed at the time it was stored,
// which a rebuild cannot know, so late records hold LL back until the checkpoint passes them.
//
// Memory does not grow with the records pending: L is kept as the lowest offset per minute of
// placement (at most 43,200 minutes for a 30-day spread), LL per second of placement for late
// records only, and the checkpoint prunes both. L is therefore conservative by up to the
// minute the checkpoint is in: a rebuild re-reads (and skips) at most that much extra. Adding a
// record is one hash lookup and taking a snapshot amortised O(1): this runs for every record.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <unordered_set>
#include <vector>

#include "plugin/delivery_tracker.h"

namespace delaybridge::plugin {

class PartitionProgress {
 public:
  // Where reading starts, when known before the first record (nothing below it is pending
  // here, except what AddRecovered declares).
  void StartAt(int64_t offset);

  // A record appended to the store at deliver_at_ms; late: placed after the time it asked for.
  void AddStored(int64_t offset, int64_t deliver_at_ms, bool late);
  // A record sent to the dead-letter topic, pending until DeadLetterAcked.
  void AddDeadLetter(int64_t offset);
  void DeadLetterAcked(int64_t offset);
  // A record that needs nothing (finished before, or already in the store).
  void AddFinished(int64_t offset);
  // Records found in a reused store, whose offsets are not known: the lowest offset any of
  // them can have (min_offset) holds L until the checkpoint passes until_ms (the end of the
  // store's last hour), and the lowest offset a late one can have (min_late_offset) holds LL
  // until it passes late_until_ms. A late record was placed at the time it was stored, so that
  // is the time the store was opened: LL is free again once what was due then is delivered.
  void AddRecovered(int64_t until_ms, int64_t min_offset, int64_t late_until_ms,
                    int64_t min_late_offset);

  // Dead letters (and, with exactly_once, records delivered at once) not yet acknowledged.
  size_t unacknowledged_dead_letters() const { return dead_letters_.size(); }
  // Whether the ingest position is known (StartAt, or a record was added): before that there
  // is nothing to commit.
  bool has_position() const { return ingest_position_ >= 0; }
  // The next offset to read (-1 before has_position()).
  int64_t ingest_position() const { return ingest_position_; }
  // L, LL and I, given the delivered checkpoint (which also prunes what it passed). Requires
  // has_position().
  struct Snapshot {
    int64_t low_watermark = 0;
    int64_t late_below = 0;
    int64_t ingest_position = 0;
  };
  Snapshot Take(RecordPosition checkpoint);

 private:
  void Consumed(int64_t offset);

  // The lowest offset per placement bucket (a minute or a second). Offsets are added in
  // increasing order, except for the few recovered ones.
  class Buckets {
   public:
    void Add(int64_t key, int64_t offset);
    void AddRecovered(int64_t key, int64_t offset);
    // Forgets the buckets before first_key; the lowest offset of the rest, or ceiling.
    int64_t PruneAndMin(int64_t first_key, int64_t ceiling);

   private:
    struct Entry {
      int64_t offset;
      int64_t key;
    };
    std::unordered_set<int64_t> live_;   // keys with a bucket
    std::deque<Entry> by_first_offset_;  // one per bucket, in creation (= offset) order
    std::vector<Entry> recovered_;       // AddRecovered: out of order, a handful
  };

  Buckets pending_by_minute_;       // placement minute -> lowest source offset
  Buckets late_by_second_;          // placement second -> lowest late offset
  std::set<int64_t> dead_letters_;  // produced, not yet acknowledged
  int64_t ingest_position_ = -1;    // -1: not known yet
};

}  // namespace delaybridge::plugin
