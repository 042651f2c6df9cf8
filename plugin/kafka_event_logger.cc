#include "plugin/kafka_event_logger.h"

namespace delaybridge::plugin {

void KafkaEventLogger::event_cb(RdKafka::Event& event) {
  switch (event.type()) {
    case RdKafka::Event::EVENT_ERROR: {
      if (event.fatal()) fatal_.store(true);
      if (event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) all_brokers_down_.store(true);
      // Broker-down style errors are transient: librdkafka keeps retrying on its own.
      const LogLevel level = event.fatal() ? LogLevel::kError : LogLevel::kWarn;
      logger_.Log(level, client_name_ + ": kafka error " + RdKafka::err2str(event.err()) + ": " +
                             event.str() + (event.fatal() ? " (fatal)" : ""));
      break;
    }
    case RdKafka::Event::EVENT_LOG: {
      // syslog severities: 0-3 error, 4 warning, 5-6 notice/info, 7 debug.
      const int severity = static_cast<int>(event.severity());
      const LogLevel level = severity <= 3   ? LogLevel::kError
                             : severity == 4 ? LogLevel::kWarn
                             : severity <= 6 ? LogLevel::kInfo
                                             : LogLevel::kDebug;
      logger_.Log(level, client_name_ + ": librdkafka " + event.fac() + ": " + event.str());
      break;
    }
    case RdKafka::Event::EVENT_THROTTLE:
      logger_.Debug(client_name_ + ": throttled " + std::to_string(event.throttle_time()) +
                    " ms by broker " + event.broker_name());
      break;
    case RdKafka::Event::EVENT_STATS:
      if (stats_ != nullptr) stats_->Append(event.str());
      break;
  }
}

}  // namespace delaybridge::plugin
