#include "tools/dump/json_line.h"

namespace delaybridge::dump {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when the bytes there are not
// one (overlong forms, surrogates and code points above U+10FFFF are invalid, RFC 3629).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char min_second = 0x80, max_second = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) min_second = 0xA0;  // overlong
    if (lead == 0xED) max_second = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) min_second = 0x90;  // overlong
    if (lead == 0xF4) max_second = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string JsonString(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        out += "\\ufffd";
        i += 1;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
    i += 1;
  }
  out += '"';
  return out;
}

JsonLine::JsonLine(std::string_view type) : text_("{\"type\":" + JsonString(type)) {}

JsonLine& JsonLine::Name(std::string_view name) {
  text_ += ',';
  text_ += JsonString(name);
  text_ += ':';
  return *this;
}

JsonLine& JsonLine::Str(std::string_view name, std::string_view value) {
  Name(name).text_ += JsonString(value);
  return *this;
}

JsonLine& JsonLine::Int(std::string_view name, int64_t value) {
  Name(name).text_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Uint(std::string_view name, uint64_t value) {
  Name(name).text_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Bool(std::string_view name, bool value) {
  Name(name).text_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::Null(std::string_view name) {
  Name(name).text_ += "null";
  return *this;
}

JsonLine& JsonLine::Raw(std::string_view name, std::string_view json) {
  Name(name).text_ += json;
  return *this;
}

}  // namespace delaybridge::dump
