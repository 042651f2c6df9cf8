// JsonLine: builds one JSON object on one line (delaylog-dump --json prints one per result, for
// jq), and JsonString, the string escaper it uses. Record keys and values are arbitrary bytes:
// control characters are escaped, and bytes that are not valid UTF-8 become U+FFFD so every
// line stays valid JSON (the --hex fields carry the exact bytes).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace delaybridge::dump {

// text as a quoted JSON string: ", \ and control characters escaped, invalid UTF-8 -> U+FFFD.
std::string JsonString(std::string_view text);

class JsonLine {
 public:
  // Every line says what it describes: "hour", "record", "problem", ...
  explicit JsonLine(std::string_view type);

  JsonLine& Str(std::string_view name, std::string_view value);
  JsonLine& Int(std::string_view name, int64_t value);
  JsonLine& Uint(std::string_view name, uint64_t value);
  JsonLine& Bool(std::string_view name, bool value);
  JsonLine& Null(std::string_view name);
  // value must already be valid JSON (a nested array or object).
  JsonLine& Raw(std::string_view name, std::string_view json);

  // The finished object, without a newline.
  std::string Finish() const { return text_ + "}"; }

 private:
  JsonLine& Name(std::string_view name);
  std::string text_;
};

}  // namespace delaybridge::dump
