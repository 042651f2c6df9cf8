#include "tools/dump/byte_preview.h"

namespace delaybridge::dump {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string_view Shown(std::string_view bytes, size_t max_bytes) {
  return max_bytes == 0 ? bytes : bytes.substr(0, max_bytes);
}

std::string CutNote(std::string_view bytes, std::string_view shown) {
  if (shown.size() == bytes.size()) return "";
  return "...(+" + std::to_string(bytes.size() - shown.size()) + " bytes)";
}

}  // namespace

std::string PrintablePreview(std::string_view bytes, size_t max_bytes) {
  std::string_view shown = Shown(bytes, max_bytes);
  std::string out;
  out.reserve(shown.size());
  for (char ch : shown) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '"') {
      // Escaped so that the quotes the preview is shown in stay unambiguous.
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7F) {
      // Escaped rather than printed so a hostile value cannot drive the operator's terminal.
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  return out + CutNote(bytes, shown);
}

std::string HexBytes(std::string_view bytes, size_t max_bytes) {
  std::string_view shown = Shown(bytes, max_bytes);
  std::string out;
  out.reserve(shown.size() * 2);
  for (char ch : shown) {
    unsigned char c = static_cast<unsigned char>(ch);
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out + CutNote(bytes, shown);
}

}  // namespace delaybridge::dump
