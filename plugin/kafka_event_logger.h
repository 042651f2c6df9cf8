// KafkaEventLogger: routes librdkafka's log lines and error events into the bridge's Logger,
// its statistics (statistics.interval.ms) into a KafkaStatsFile when one is given, and remembers
// whether librdkafka reported a fatal error (the idempotent producer can hit one; the bridge then
// stops, and a restart resumes from its checkpoints) and whether every broker connection is down
// (for the readiness check).
//
// Thread-safety: event_cb runs on librdkafka's threads (log events) and on the polling thread
// (errors, statistics); the Logger and the KafkaStatsFile are thread-safe and the flags are
// atomic.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <string>

#include "plugin/kafka_stats_file.h"
#include "plugin/log.h"

namespace delaybridge::plugin {

class KafkaEventLogger : public RdKafka::EventCb {
 public:
  // stats may be null: statistics are then dropped (the config rejects enabling them without a
  // file).
  KafkaEventLogger(Logger& logger, std::string client_name, KafkaStatsFile* stats)
      : logger_(logger), client_name_(std::move(client_name)), stats_(stats) {}

  void event_cb(RdKafka::Event& event) override;
  bool fatal() const { return fatal_.load(); }
  // librdkafka reported every broker connection down, and nothing said since that one answers.
  bool all_brokers_down() const { return all_brokers_down_.load(); }
  // A broker answered a request (a commit succeeded).
  void BrokersAnswered() { all_brokers_down_.store(false); }

 private:
  Logger& logger_;
  std::string client_name_;
  KafkaStatsFile* const stats_;
  std::atomic<bool> fatal_{false};
  std::atomic<bool> all_brokers_down_{false};
};

}  // namespace delaybridge::plugin
