#include "plugin/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace delaybridge::plugin {

namespace {

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO ";
    case LogLevel::kWarn:
      return "WARN ";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?    ";
}

// UTC with milliseconds, e.g. 2026-11-22T16:20:01.123Z.
std::string TimestampNow() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const int64_t epoch_ms = duration_cast<milliseconds>(now.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(epoch_ms / 1000);
  struct tm utc;
  gmtime_r(&seconds, &utc);
  char buf[64];  // room for any int the compiler cannot rule out
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(epoch_ms % 1000));
  return buf;
}

// Appends message with every control byte written as \xNN: a record's header or topic name that
// reaches a log line cannot end it and forge the next one.
void AppendEscaped(std::string_view message, std::string* line) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : message) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte != 0x7f) {
      line->push_back(ch);
      continue;
    }
    line->append("\\x");
    line->push_back(kHex[byte >> 4]);
    line->push_back(kHex[byte & 0xf]);
  }
}

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view text) {
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn") return LogLevel::kWarn;
  if (text == "error") return LogLevel::kError;
  return Status::InvalidArgument("must be one of debug, info, warn, error, got \"" +
                                 std::string(text) + "\"");
}

void Logger::Log(LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  std::string line = TimestampNow();
  line += ' ';
  line += LevelName(level);
  line += ' ';
  AppendEscaped(message, &line);
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n <= 0) return;  // nowhere left to report a failing log sink
    written += static_cast<size_t>(n);
  }
}

}  // namespace delaybridge::plugin
