#include "tests/tools/dump_json_check.h"

#include <cstdint>

namespace delaybridge::dump {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  std::optional<std::map<std::string, std::string>> TopObject() {
    std::map<std::string, std::string> fields;
    SkipSpace();
    if (!Object(&fields)) return std::nullopt;
    SkipSpace();
    if (pos_ != text_.size()) return std::nullopt;
    return fields;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  unsigned char Peek() const { return static_cast<unsigned char>(text_[pos_]); }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // members, when given, receives the object's members (strings decoded, others raw).
  bool Object(std::map<std::string, std::string>* members) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    do {
      SkipSpace();
      std::string name;
      if (!String(&name) || !Eat(':')) return false;
      SkipSpace();
      size_t start = pos_;
      std::string decoded;
      bool is_string = !AtEnd() && Peek() == '"';
      if (!(is_string ? String(&decoded) : Value())) return false;
      if (members != nullptr) {
        (*members)[name] = is_string ? decoded : text_.substr(start, pos_ - start);
      }
    } while (Eat(','));
    return Eat('}');
  }

  bool Array() {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    do {
      if (!Value()) return false;
    } while (Eat(','));
    return Eat(']');
  }

  bool Value() {
    SkipSpace();
    if (AtEnd()) return false;
    std::string ignored;
    switch (Peek()) {
      case '{':
        return Object(nullptr);
      case '[':
        return Array();
      case '"':
        return String(&ignored);
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  bool Literal(const std::string& word) {
    if (text_.compare(pos_, word.size(), word) != 0) return false;
    pos_ += word.size();
    return true;
  }

  bool Digits() {
    size_t start = pos_;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool Number() {
    if (!AtEnd() && Peek() == '-') ++pos_;
    if (AtEnd()) return false;
    if (Peek() == '0') {
      ++pos_;
    } else if (!Digits()) {
      return false;
    }
    if (!AtEnd() && Peek() == '.') {
      ++pos_;
      if (!Digits()) return false;
    }
    if (!AtEnd() && (Peek() == 'e' || Peek() == 'E')) {
      ++pos_;
      if (!AtEnd() && (Peek() == '+' || Peek() == '-')) ++pos_;
      if (!Digits()) return false;
    }
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool Hex4(uint32_t* value) {
    if (pos_ + 4 > text_.size()) return false;
    *value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0) return false;
      *value = *value * 16 + digit;
    }
    return true;
  }

  bool Escape(std::string* out) {
    if (AtEnd()) return false;
    char c = text_[pos_++];
    static const std::string kSimple = "\"\\/bfnrt";
    static const std::string kMeaning = "\"\\/\b\f\n\r\t";
    if (size_t at = kSimple.find(c); at != std::string::npos) {
      *out += kMeaning[at];
      return true;
    }
    if (c != 'u') return false;
    uint32_t cp = 0;
    if (!Hex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (!Literal("\\u") || !Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(cp, out);
    return true;
  }

  // One raw UTF-8 sequence of a code point >= 0x80, strictly (RFC 3629).
  bool Utf8Sequence(std::string* out) {
    unsigned char lead = Peek();
    size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (lead < 0xC2 || lead > 0xF4 || pos_ + length > text_.size()) return false;
    uint32_t cp = lead & (0x7F >> length);
    for (size_t k = 1; k < length; ++k) {
      unsigned char c = static_cast<unsigned char>(text_[pos_ + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    static const uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    out->append(text_, pos_, length);
    pos_ += length;
    return true;
  }

  bool String(std::string* out) {
    if (AtEnd() || text_[pos_] != '"') return false;
    ++pos_;
    while (!AtEnd()) {
      unsigned char c = Peek();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++pos_;
        if (!Escape(out)) return false;
      } else if (c >= 0x80) {
        if (!Utf8Sequence(out)) return false;
      } else {
        *out += static_cast<char>(c);
        ++pos_;
      }
    }
    return false;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<std::map<std::string, std::string>> JsonObjectFields(const std::string& text) {
  return Parser(text).TopObject();
}

}  // namespace delaybridge::dump
