// Logger: one line per notable event, written to stderr (or a file descriptor given at
// construction) with a level filter, in one of two formats:
//  - text: "2026-11-22T16:20:01.123Z INFO  message", control bytes in the message escaped
//    (\xNN) so that one event is always one line;
//  - json: {"time":"2026-11-22T16:20:01.123Z","level":"info","message":"..."}, one object a
//    line for log shippers; the message is a valid JSON string whatever bytes it holds (control
//    bytes and bytes that are not UTF-8 appear as \xNN, as in text).
//
// Thread-safety: Log() may be called from any thread (librdkafka's log callback runs on its
// own threads); each line is written with a single write(2) under a mutex so lines never
// interleave.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace delaybridge::plugin {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Parses "debug", "info", "warn", "error".
Result<LogLevel> ParseLogLevel(std::string_view text);
// The inverse: "debug", "info", "warn", "error".
std::string_view LogLevelName(LogLevel level);

enum class LogFormat { kText, kJson };

// Parses "text", "json".
Result<LogFormat> ParseLogFormat(std::string_view text);

class Logger {
 public:
  explicit Logger(LogLevel min_level, int fd = 2, LogFormat format = LogFormat::kText)
      : min_level_(min_level), fd_(fd), format_(format) {}

  bool enabled(LogLevel level) const { return level >= min_level_; }

  void Log(LogLevel level, std::string_view message);
  void Debug(std::string_view message) { Log(LogLevel::kDebug, message); }
  void Info(std::string_view message) { Log(LogLevel::kInfo, message); }
  void Warn(std::string_view message) { Log(LogLevel::kWarn, message); }
  void Error(std::string_view message) { Log(LogLevel::kError, message); }

 private:
  std::mutex mu_;
  const LogLevel min_level_;
  int fd_;
  const LogFormat format_;
};

}  // namespace delaybridge::plugin
