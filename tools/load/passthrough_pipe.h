// PassthroughPipe: the baseline a delay bridge is measured against. It consumes the delay
// topic and produces every record to the target topic at once, doing the same per-record
// work a bridge does on the way out (copy key, value and headers, drop the delay headers, add
// x-delay-source, murmur2 partitioning, acks=all idempotent producer) and nothing else: no
// storage, no timer, no offset commits.
//
// Thread-safety: Run executes on one thread and owns both handles' polling.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace delaybridge::load {

class PassthroughPipe {
 public:
  PassthroughPipe(rd_kafka_t* consumer, rd_kafka_t* producer, std::string target_topic);

  // Forwards records until `stop` is set, then flushes. Returns the first produce error. While
  // the clock is before `hold_until_ms` (epoch ms; 0: no hold) it leaves records where they are,
  // so that --due-together measures how fast a backlog drains.
  Status Run(const std::atomic<bool>& stop, const std::atomic<int64_t>& hold_until_ms);

  int64_t forwarded() const { return forwarded_.load(std::memory_order_relaxed); }

 private:
  Status Forward(rd_kafka_message_t& message);

  rd_kafka_t* consumer_;
  rd_kafka_t* producer_;
  std::string target_topic_;
  std::atomic<int64_t> forwarded_{0};
};

}  // namespace delaybridge::load
