// ParseJsonLogLine: the fields of one line of `log_format: json`, checked against the exact shape
// Logger writes ({"time":"<24 chars>","level":"<name>","message":"<escaped>"}), for tests. The
// message is returned as written (still escaped); nullopt when the line has any other shape or
// the message holds a quote or backslash that is not escaped.
//
// Thread-safety: a pure function.
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

namespace delaybridge::plugin {

struct JsonLogLine {
  std::string time;
  std::string level;
  std::string message;
};

inline std::optional<JsonLogLine> ParseJsonLogLine(std::string_view line) {
  constexpr std::string_view kTime = R"({"time":")";
  constexpr std::string_view kLevel = R"(","level":")";
  constexpr std::string_view kMessage = R"(","message":")";
  constexpr std::string_view kEnd = R"("})";
  constexpr size_t kTimeLength = 24;  // 2026-11-22T16:20:01.123Z
  JsonLogLine fields;
  if (!line.starts_with(kTime) || line.size() < kTime.size() + kTimeLength) return std::nullopt;
  fields.time = line.substr(kTime.size(), kTimeLength);
  if (fields.time[10] != 'T' || fields.time.back() != 'Z') return std::nullopt;
  line.remove_prefix(kTime.size() + kTimeLength);
  if (!line.starts_with(kLevel)) return std::nullopt;
  line.remove_prefix(kLevel.size());
  const size_t level_end = line.find('"');
  if (level_end == std::string_view::npos) return std::nullopt;
  fields.level = line.substr(0, level_end);
  line.remove_prefix(level_end);
  if (!line.starts_with(kMessage) || !line.ends_with(kEnd)) return std::nullopt;
  fields.message = line.substr(kMessage.size(), line.size() - kMessage.size() - kEnd.size());
  for (size_t i = 0; i < fields.message.size(); ++i) {
    const char ch = fields.message[i];
    if (ch == '"') return std::nullopt;
    if (ch == '\\') {
      if (i + 1 == fields.message.size()) return std::nullopt;
      const char escaped = fields.message[++i];
      if (escaped != '"' && escaped != '\\') return std::nullopt;
    }
  }
  return fields;
}

}  // namespace delaybridge::plugin
