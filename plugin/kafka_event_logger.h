// KafkaEventLogger: routes librdkafka's log lines and error events into the bridge's Logger,
// its statistics (statistics.interval.ms) into a KafkaStatsFile when one is given, and remembers
// whether librdkafka reported a fatal error (the idempotent producer can hit one; the bridge then
// stops, and a restart resumes from its checkpoints).
//
// Thread-safety: event_cb runs on librdkafka's threads (log events) and on the polling thread
// (errors, statistics); the Logger and the KafkaStatsFile are thread-safe and the fatal flag is
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

 private:
  Logger& logger_;
  std::string client_name_;
  KafkaStatsFile* const stats_;
  std::atomic<bool> fatal_{false};
};

}  // namespace delaybridge::plugin
