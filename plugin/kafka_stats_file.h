// KafkaStatsFile: appends librdkafka's statistics (the JSON emitted every
// statistics.interval.ms, documented in librdkafka's STATISTICS.md) to a file, one JSON object
// per line, from the consumer and the producer alike. Operators feed it to their tools;
// scripts/kafka-stats.py summarises where produced records wait (producer queue, socket,
// broker).
//
// A failed write is logged (at most once a minute) and the blob dropped: statistics never hold
// up a delivery.
//
// Thread-safety: Append may be called from any thread; writes are serialised.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "plugin/log.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

class KafkaStatsFile {
 public:
  // Opens (creates, appends to) path.
  static Result<std::unique_ptr<KafkaStatsFile>> Open(const std::string& path, Logger& logger,
                                                      const Clock& clock);
  ~KafkaStatsFile();
  KafkaStatsFile(const KafkaStatsFile&) = delete;
  KafkaStatsFile& operator=(const KafkaStatsFile&) = delete;

  // Appends json and a newline in one write.
  void Append(std::string_view json);

 private:
  KafkaStatsFile(std::string path, int fd, Logger& logger, const Clock& clock);

  const std::string path_;
  const int fd_;
  std::mutex mu_;
  WarningThrottle warnings_;  // guarded by mu_
};

}  // namespace delaybridge::plugin
