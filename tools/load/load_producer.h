// LoadProducer: writes delaybridge-load's records to the delay topic (the target in --mode
// direct) at the requested rate, with the requested delays, keys, payload size and header
// style, and remembers for every record when it is meant to arrive and whether the broker
// acknowledged it.
//
// Thread-safety: one thread calls Run (delivery reports arrive on that thread, from
// rd_kafka_poll/flush); records_attempted() may be read from any thread meanwhile.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/lateness_histogram.h"
#include "core/status.h"
#include "tools/load/load_options.h"
#include "tools/load/record_stamp.h"

namespace delaybridge::load {

// What the producing side knows at the end.
struct ProduceResult {
  int64_t attempted = 0;      // records handed to librdkafka
  int64_t acked = 0;          // records the broker acknowledged
  int64_t failed = 0;         // records librdkafka reported as not produced
  int64_t first_send_ms = 0;  // Unix epoch ms of the first and last produce call
  int64_t last_send_ms = 0;
  int64_t flushed_ms = 0;              // when the last acknowledgement arrived
  std::vector<int64_t> deliver_at_ms;  // by record id
  std::vector<uint8_t> acked_flag;     // by record id: 1 when the broker acknowledged it
  std::vector<int64_t> sent_ms;        // by record id: epoch ms of its produce call
  // From the produce call to the broker's acknowledgement, us: how long records took to reach
  // the delay topic, so a late delivery can be told apart from a producer that fell behind.
  LatenessHistogram ack_latency;
};

class LoadProducer {
 public:
  LoadProducer(const LoadOptions& options, uint64_t run_id);

  // The librdkafka delivery-report callback; the producer's opaque must be this LoadProducer.
  static void OnDeliveryReport(rd_kafka_t* producer, const rd_kafka_message_t* message,
                               void* opaque);

  // Produces every record, then flushes (waiting up to flush_timeout_ms). `progress` is called
  // about every progress_interval_ms from this thread.
  // due_at_ms > 0: every record is due then (--due-together) instead of after a drawn delay.
  Result<ProduceResult> Run(rd_kafka_t* producer, int flush_timeout_ms,
                            const std::function<void()>& progress, int64_t progress_interval_ms,
                            int64_t due_at_ms);

  // Produces `count` warm-up records due at once (x-delay: 0) and flushes them.
  Status RunWarmup(rd_kafka_t* producer, int64_t count, int flush_timeout_ms);

  // Ids below this have been (or are being) produced; a delivered id at or above it is foreign.
  uint64_t records_attempted() const { return attempted_.load(std::memory_order_acquire); }
  const std::atomic<uint64_t>& attempted_counter() const { return attempted_; }

 private:
  Status ProduceOne(rd_kafka_t* producer, uint64_t record_id);
  // Hands one record to librdkafka, waiting while its local queue is full.
  Status Send(rd_kafka_t* producer, const RecordStamp& stamp, int64_t timestamp_ms,
              const std::string& header_name, const std::string& header_value);
  bool Finished(uint64_t record_id, int64_t elapsed_ms) const;

  const LoadOptions& options_;
  const std::string& topic_;  // ProducedTopic(options_)
  const uint64_t run_id_;
  std::mt19937_64 engine_;
  int64_t due_at_ms_ = 0;         // --due-together: the shared deliver-at; 0 otherwise
  std::vector<std::byte> value_;  // reused value buffer: stamp + filler
  ProduceResult result_;
  std::atomic<uint64_t> attempted_{0};
};

}  // namespace delaybridge::load
