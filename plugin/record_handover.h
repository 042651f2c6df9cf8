// RecordHandover: what the ingest side gives the delivery thread (Deliverer): durable records to
// deliver when due, records to produce now (dead letters, exactly_once's delivered-behind
// records) and cancels of records loaded from a store; and how many records it holds, the
// bound consumption pauses at. An interface, so the ingest pipeline's rules (what is stored,
// dead-lettered, skipped, cancelled, and in which order it is handed over) are unit-tested with
// a fake that records what it was given.
//
// Thread-safety: every method is called from the owner's thread (the bridge's event loop);
// commands are carried out in the order they were made, each after the records scheduled before
// it (records scheduled after it may be taken first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "plugin/delivery_form.h"
#include "plugin/delivery_tracker.h"
#include "plugin/encoded_record.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

// A durable record handed to the delivery thread. Its copies of fields of `record` are made by
// the constructor, so `record` is never replaced in a DueRecord (and is declared last: the
// constructor reads `encoded` before moving it).
struct DueRecord {
  DueRecord(TopicPartitionId from_store, RecordPosition at, EncodedRecord encoded)
      : store(std::move(from_store)),
        position(at),
        requested_deliver_at_ms(encoded.requested_deliver_at_ms()),
        source_offset(encoded.source_offset()),
        record(std::move(encoded)) {}

  TopicPartitionId store;
  RecordPosition position;  // where the store placed it: maybe later than requested
  // The record's own fields, read when it is made, while its bytes are in the cache: the owner
  // (a batch's earliest due time, IngestPipeline::Cancel's match) and the delivery thread (the
  // wheel's deadline, the cancel index) use them seconds before the bytes are produced.
  int64_t requested_deliver_at_ms;
  int64_t source_offset;
  EncodedRecord record;
};

class RecordHandover {
 public:
  virtual ~RecordHandover() = default;

  // Schedules durable records for delivery at the time each asked for. A record's position can
  // be later than that (PartitionStore::Append places it after the delivered watermark, which
  // runs ahead of the clock after the clock stepped back, or by up to the preload horizon): it
  // orders the record in the store, it does not delay it.
  virtual void Schedule(std::vector<DueRecord> records) = 0;
  // Produces a record that is in no store now (a dead letter, form kDeadLetter, or
  // exactly_once's delivered-behind record, form kRecord), retrying until acknowledged. It is
  // acknowledged by its source offset.
  virtual void ProduceNow(TopicPartitionId store, EncodedRecord record, DeliveryForm form) = 0;
  // Drops the records of store with this source offset, loaded from the store (Schedule), that
  // wait to be produced; answered in an AckBatch (CancelAnswer) either way. Commands run in
  // order, so a record scheduled before the call is found. counted: the owner counted the
  // cancel already (handed back in the answer).
  virtual void Cancel(TopicPartitionId store, int64_t target_offset, bool counted) = 0;
  // Records handed over and not yet acknowledged or released: the bridge's memory bound.
  virtual size_t in_memory() const = 0;
};

}  // namespace delaybridge::plugin
