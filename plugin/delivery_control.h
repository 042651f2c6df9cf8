// DeliveryControl: what the revocation and the exactly-once transaction cutter need from the
// delivery thread (Deliverer): release partitions' records, take the acknowledgements, and
// prepare, commit or abort the open transaction. An interface, so their ordering rules are
// unit-tested with a fake that records the order of calls.
//
// Thread-safety: every method is called from the owner's thread (the bridge's event loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "core/status.h"
#include "plugin/ack_batch.h"
#include "plugin/delivery_tracker.h"
#include "plugin/group_metadata.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class DeliveryControl {
 public:
  struct ReleaseResult {
    bool flushed =
        true;  // every produced record of the stores was acknowledged (or failed) in time
    size_t released = 0;  // records of the stores dropped from memory
  };
  struct PreparedCommit {
    Status status;       // not ok: a record of the open transaction failed; it cannot commit
    int64_t cut_ms = 0;  // every record handed over and due at or before this was produced
    AckBatch acks;       // acknowledged since the last PrepareCommit
    // Per store, the latest position produced in the open transaction.
    std::map<TopicPartitionId, RecordPosition> last_produced;
  };
  struct AbortResult {
    Status status;
    // Since the last abort a record was refused and now goes in a new form or alone: a later
    // transaction can get further, so this abort was progress.
    bool learnt_refusal = false;
  };

  virtual ~DeliveryControl() = default;

  // Stops producing these stores' records, waits (up to flush_timeout_ms) for the
  // acknowledgements of those already produced, then forgets every record of these stores.
  // Blocks the caller until done.
  virtual ReleaseResult Release(const std::vector<TopicPartitionId>& stores,
                                int flush_timeout_ms) = 0;
  // The acknowledgements since the last call.
  virtual AckBatch TakeAcks() = 0;

  // exactly_once. Produces everything due now, stops producing, and waits up to
  // flush_timeout_ms for every produced record's acknowledgement.
  virtual PreparedCommit PrepareCommit(int flush_timeout_ms) = 0;
  // After PrepareCommit: commits the open transaction with these offsets, then produces again
  // unless told not to.
  virtual Status CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                                   const rd_kafka_consumer_group_metadata_t* group, int timeout_ms,
                                   bool resume) = 0;
  // After PrepareCommit: produces again, the transaction still open.
  virtual void Resume() = 0;
  // After a failed PrepareCommit or CommitTransaction: aborts the open transaction and forgets
  // what it acknowledged; producing stays stopped until Resume. status FailedPrecondition: the
  // producer cannot go on.
  virtual AbortResult AbortTransaction(int timeout_ms) = 0;
};

}  // namespace delaybridge::plugin
