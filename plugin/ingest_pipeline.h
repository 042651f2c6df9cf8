// IngestPipeline: what becomes of each record consumed from a delay topic, in order. A record is
// stored in its partition's store (and handed to the delivery thread at once when it falls
// inside the preloaded horizon), dead-lettered (bad input: DecideIngest, or a time the store
// cannot place), applied as a cancel, delivered at once (exactly_once, a time before the
// committed checkpoint), or skipped because this run or an earlier owner already took it.
//
// A record a store cannot take for now (a full disk, out of file descriptors) waits, with every
// record consumed after it, and is tried again with back-off (100 ms doubling to 5 s); while any
// wait the owner keeps consumption paused (held() > 0) and deliveries go on. A store that cannot
// be used any more (a failed fdatasync) is fatal: fail is called and nothing more is ingested,
// so no later record moves a store's marker or a partition's progress past the one that failed.
//
// Thread-safety: one owner thread (the bridge's event loop) calls every method; the retry timer
// runs on the io_context given.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "plugin/ack_batch.h"
#include "plugin/ingest.h"
#include "plugin/log.h"
#include "plugin/partition_store.h"
#include "plugin/record_handover.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

// What the pipeline did, since it was made.
struct IngestCounts {
  uint64_t stored = 0;
  uint64_t already_stored = 0;    // re-consumed after a crash, skipped
  uint64_t already_finished = 0;  // read again, finished per the committed progress, skipped
  uint64_t refetched = 0;         // returned again by the consumer in this run, skipped
  uint64_t dead_lettered = 0;
  uint64_t delivered_behind = 0;  // exactly_once: asked for a time before the checkpoint
  uint64_t cancelled = 0;         // cancels whose target was pending: never delivered
  uint64_t cancel_too_late = 0;   // cancels whose target was delivered (or produced) already
  uint64_t cancel_unknown = 0;    // cancels naming no record the store holds
  uint64_t corrupt_records = 0;   // damage met while finding a cancel's target
  uint64_t append_failures = 0;   // appends a store could not take (the record was held)
};

class IngestPipeline {
 public:
  struct Settings {
    std::map<std::string, std::string> routes;  // delay topic -> default target topic
    IngestPolicy policy;
    std::string dead_letter_topic;
  };
  struct Hooks {
    // Records started or stopped waiting for a store: consumption pauses or resumes.
    std::function<void()> held_changed;
    // A store cannot be used any more: the bridge must stop.
    std::function<void(const Status&)> fail;
  };

  IngestPipeline(boost::asio::io_context& io, Settings settings, PartitionStores& stores,
                 RecordHandover& delivery, Hooks hooks, Logger& logger, WarningThrottle& warnings,
                 const Clock& clock);

  // Ingests consumed records in the order given; behind a waiting record they wait too.
  void Take(std::vector<IncomingRecord> records);
  // Revoked or reloaded partitions: their waiting records are not committed, so whoever reads
  // these partitions next reads them again.
  void DropHeld(const std::vector<TopicPartitionId>& partitions);
  size_t held() const { return held_.size(); }

  // The delivery thread's answers to cancels it was given (RecordHandover::Cancel).
  void ApplyCancelAnswers(const std::vector<AckBatch::CancelAnswer>& answers);

  const IngestCounts& counts() const { return counts_; }

 private:
  // The store and default target of the partition a batch's records came from last: a batch is
  // mostly runs of one partition's records, so its lookups are made once per run instead of
  // once per record (a map of topic names each). Valid for one Take or RetryHeld: stores come
  // and go between them.
  struct LastPartition {
    std::optional<TopicPartitionId> id;           // what it was looked up for; nullopt: nothing yet
    PartitionStore* store = nullptr;              // nullptr: not assigned
    const std::string* default_target = nullptr;  // set with store
  };
  // Appends one record; one due inside the preloaded horizon is added to *due. An error: the
  // store could not take it for now and nothing changed.
  Status Ingest(const IncomingRecord& in, LastPartition& last, std::vector<DueRecord>* due);
  // Looks in's store and default target up unless last holds them already.
  void LookUp(const IncomingRecord& in, LastPartition& last) const;
  // Read again: the store or the committed progress says it was taken already.
  void SkipFinished(PartitionStore& store, int64_t offset, uint64_t& counter);
  Status DeadLetter(PartitionStore& store, const IncomingRecord& in, const std::string& reason);
  // Drops the cancel's target from the store, or asks the delivery thread to drop it from
  // memory (after handing it *due, so a target consumed in the same batch is found there).
  Status Cancel(PartitionStore& store, const StoredCancel& cancel, std::vector<DueRecord>* due);
  void CancelTooLate(const TopicPartitionId& store, int64_t target_offset);
  // exactly_once. A record asking for a time before the committed checkpoint: delivered now,
  // finished when the transaction holding it commits.
  void DeliverBehind(PartitionStore& store, const IncomingRecord& in, EncodedRecord record);
  void Fail(const Status& status);

  void Hold(IncomingRecord record, const Status& why);
  void ScheduleRetry();
  void RetryHeld();

  const Settings settings_;
  PartitionStores& stores_;
  RecordHandover& delivery_;
  Hooks hooks_;
  Logger& logger_;
  WarningThrottle& warnings_;
  const Clock& clock_;

  boost::asio::steady_timer retry_timer_;
  std::deque<IncomingRecord> held_;  // consumed, waiting for a store; oldest first
  int64_t retry_ms_ = 0;             // back-off before the next retry
  int64_t held_since_ms_ = 0;
  bool failed_ = false;
  IngestCounts counts_;
};

}  // namespace delaybridge::plugin
