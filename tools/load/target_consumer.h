// TargetConsumer: reads the target topic on its own thread and keeps the tally that the report
// is made of: which records of this run arrived, how often, and how late.
//
// Lateness is measured twice per record: consume time (system clock, microseconds) minus
// deliver-at, and the record's broker timestamp minus deliver-at. The second is only compared
// for earliness when the topic stamps LogAppendTime, because with CreateTime the timestamp is
// whatever the deliverer chose to set.
//
// Thread-safety: Run executes on one thread; delivered_unique() may be read from any thread;
// tally() only after Run has returned.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/lateness_histogram.h"

namespace delaybridge::load {

struct DeliveryTally {
  int64_t delivered_unique = 0;  // records of this run that arrived at least once
  int64_t duplicates = 0;        // arrivals beyond the first
  int64_t foreign = 0;           // records not written by this run (other runs, other writers)
  int64_t consume_errors = 0;
  int64_t first_delivery_ms = 0;  // consume time of the first and last first-arrivals
  int64_t last_delivery_ms = 0;
  int64_t log_append_time_records = 0;  // arrivals whose timestamp type was LogAppendTime
  int64_t create_time_records = 0;
  int64_t early_by_append_time = 0;  // broker LogAppendTime before deliver-at
  int64_t early_records = 0;         // records early by consume time or by LogAppendTime
  LatenessHistogram consume_lateness;
  LatenessHistogram broker_lateness;
  // Records whose LogAppendTime was more than late_over_ms after their deliver-at, when asked.
  struct LateRecord {
    int64_t deliver_at_ms;
    int64_t log_append_time_ms;
  };
  std::vector<LateRecord> late_records;
  std::vector<uint8_t> arrivals;  // by record id, saturating at 255
};

class TargetConsumer {
 public:
  // `ids_produced` bounds valid record ids (an id at or above it was never produced).
  // list_late_over_ms >= 0: records whose LogAppendTime is more than that after their deliver-at
  // are kept in tally().late_records.
  TargetConsumer(rd_kafka_t* consumer, uint64_t run_id, const std::atomic<uint64_t>& ids_produced,
                 int64_t list_late_over_ms = -1);

  // Consumes until `stop` is set.
  void Run(const std::atomic<bool>& stop);

  int64_t delivered_unique() const { return delivered_unique_.load(std::memory_order_acquire); }
  int64_t warmup_arrivals() const { return warmup_arrivals_.load(std::memory_order_acquire); }
  const DeliveryTally& tally() const { return tally_; }

 private:
  void Take(const rd_kafka_message_t& message, int64_t consumed_us);

  rd_kafka_t* consumer_;
  const uint64_t run_id_;
  const std::atomic<uint64_t>& ids_produced_;
  const int64_t list_late_over_ms_;
  DeliveryTally tally_;
  std::atomic<int64_t> delivered_unique_{0};
  std::atomic<int64_t> warmup_arrivals_{0};
};

}  // namespace delaybridge::load
