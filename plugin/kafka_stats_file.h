// KafkaStatsFile: appends librdkafka's statistics (the JSON emitted every
// statistics.interval.ms, documented in librdkafka's STATISTICS.md) to a file, one JSON object
// per line, from the consumer and the producer alike. Operators feed it to their tools;
// scripts/kafka-stats.py summarises where produced records wait (producer queue, socket,
// broker).
//
// Statistics arrive on the threads that poll the clients, the delivery thread among them, so
// Append only queues the blob: a thread of its own writes it. A disk that stalls or fills up
// never holds up a delivery. Blobs beyond kMaxQueued waiting are dropped, and failed writes and
// drops are logged at most once a minute.
//
// Thread-safety: Append may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "core/status.h"
#include "plugin/log.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

class KafkaStatsFile {
 public:
  // Blobs waiting to be written; at the default one per client per second, a minute of a
  // stalled disk.
  static constexpr size_t kMaxQueued = 128;

  // Opens (creates, appends to) path and starts the writer.
  static Result<std::unique_ptr<KafkaStatsFile>> Open(const std::string& path, Logger& logger,
                                                      const Clock& clock);
  // Writes what is queued, then stops the writer and closes the file.
  ~KafkaStatsFile();
  KafkaStatsFile(const KafkaStatsFile&) = delete;
  KafkaStatsFile& operator=(const KafkaStatsFile&) = delete;

  // Queues json to be written as one line.
  void Append(std::string_view json);

 private:
  KafkaStatsFile(std::string path, int fd, Logger& logger, const Clock& clock);
  void WriterLoop();
  void WriteLine(const std::string& line);  // on the writer thread

  const std::string path_;
  const int fd_;
  WarningThrottle warnings_;  // writer thread only

  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<std::string> queue_;  // guarded by mu_
  uint64_t dropped_ = 0;           // guarded by mu_: since the last warning
  bool stopping_ = false;          // guarded by mu_
  std::thread writer_;             // last: started after everything above exists
};

}  // namespace delaybridge::plugin
