// PassthroughPipe: the baseline a delay bridge is measured against. It consumes the delay
// topic and produces every record to the target topic at once, doing the same per-record
// work a bridge does on the way out (copy key, value and headers, drop the delay headers, add
// x-delay-source, murmur2 partitioning, acks=all idempotent producer) and nothing else: no
// storage, no timer, no offset commits. It runs inside the tool (--mode passthrough) or as a
// process of its own (--mode pipe, pipe_run.h), with the same clients either way.
//
// Thread-safety: Run executes on one thread and owns both handles' polling.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "tools/load/kafka_client.h"

namespace delaybridge::load {

class PassthroughPipe {
 public:
  // A pipe with clients of its own: a producer with the tool's producer defaults, and a
  // consumer of every partition of `delay_topic` from its end now (so it forwards exactly what
  // is written from now on), both with the -X `overrides`.
  static Result<std::unique_ptr<PassthroughPipe>> Connect(const std::string& bootstrap,
                                                          const std::string& delay_topic,
                                                          const std::string& target_topic,
                                                          const std::string& group_id,
                                                          const KafkaProperties& overrides);

  // Forwards records until `stop` is set, then flushes. Returns the first produce error. While
  // the clock is before `hold_until_ms` (epoch ms; 0: no hold) it leaves records where they are,
  // so that --due-together measures how fast a backlog drains.
  Status Run(const std::atomic<bool>& stop, const std::atomic<int64_t>& hold_until_ms);

  int64_t forwarded() const { return forwarded_.load(std::memory_order_relaxed); }

 private:
  PassthroughPipe(KafkaHandle consumer, KafkaHandle producer, std::string target_topic);

  Status Forward(rd_kafka_message_t& message);

  KafkaHandle consumer_;
  KafkaHandle producer_;
  std::string target_topic_;
  std::atomic<int64_t> forwarded_{0};
};

}  // namespace delaybridge::load
