#include "plugin/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace delaybridge::plugin {

namespace {

// The text format's level column: upper case, padded to one width.
const char* LevelColumn(LogLevel level) {
  static constexpr const char* kColumns[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
  return kColumns[static_cast<int>(level)];
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

// Appends prefix and byte in two hex digits.
void AppendHexEscape(unsigned char byte, const char* prefix, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append(prefix);
  out->push_back(kHex[byte >> 4]);
  out->push_back(kHex[byte & 0xf]);
}

// Appends message with every control byte written as \xNN: a record's header or topic name that
// reaches a log line cannot end it and forge the next one.
void AppendEscaped(std::string_view message, std::string* line) {
  for (const char ch : message) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte != 0x7f) {
      line->push_back(ch);
    } else {
      AppendHexEscape(byte, "\\x", line);
    }
  }
}

// The length of the well-formed UTF-8 sequence at the start of bytes (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view bytes) {
  const auto at = [&bytes](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = at(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the allowed range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (bytes.size() < length || at(1) < low || at(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (at(i) < 0x80 || at(i) > 0xbf) return 0;
  }
  return length;
}

// Appends message as the inside of a JSON string: quote and backslash escaped, UTF-8 kept,
// control bytes and bytes that are not UTF-8 written as the text \xNN (as the text format does).
void AppendJsonEscaped(std::string_view message, std::string* line) {
  for (size_t i = 0; i < message.size();) {
    const auto byte = static_cast<unsigned char>(message[i]);
    if (byte == '"' || byte == '\\') {
      line->push_back('\\');
      line->push_back(static_cast<char>(byte));
      ++i;
    } else if (byte < 0x20 || byte == 0x7f) {
      AppendHexEscape(byte, "\\\\x", line);
      ++i;
    } else if (byte < 0x80) {
      line->push_back(static_cast<char>(byte));
      ++i;
    } else if (const size_t length = Utf8SequenceLength(message.substr(i)); length > 0) {
      line->append(message.substr(i, length));
      i += length;
    } else {
      AppendHexEscape(byte, "\\\\x", line);
      ++i;
    }
  }
}

std::string TextLine(LogLevel level, std::string_view message) {
  std::string line = TimestampNow();
  line += ' ';
  line += LevelColumn(level);
  line += ' ';
  AppendEscaped(message, &line);
  line += '\n';
  return line;
}

std::string JsonLine(LogLevel level, std::string_view message) {
  std::string line = "{\"time\":\"";
  line += TimestampNow();
  line += "\",\"level\":\"";
  line += LogLevelName(level);
  line += "\",\"message\":\"";
  AppendJsonEscaped(message, &line);
  line += "\"}\n";
  return line;
}

}  // namespace

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return Status::InvalidArgument("must be text or json, got \"" + std::string(text) + "\"");
}

std::string_view LogLevelName(LogLevel level) {
  static constexpr std::string_view kNames[] = {"debug", "info", "warn", "error"};
  return kNames[static_cast<int>(level)];
}

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
  const std::string line =
      format_ == LogFormat::kJson ? JsonLine(level, message) : TextLine(level, message);
  std::lock_guard<std::mutex> lock(mu_);
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n <= 0) return;  // nowhere left to report a failing log sink
    written += static_cast<size_t>(n);
  }
}

}  // namespace delaybridge::plugin
