// FuzzInput: carves a libFuzzer input into the pieces a target needs (length-prefixed byte
// strings, small integers), so one flat input can stand for several files or header values and
// the fuzzer's mutations stay meaningful across runs.
//
// Thread-safety: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace delaybridge::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}

  bool empty() const { return rest_.empty(); }

  // A byte (0 when none is left).
  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const uint8_t b = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }

  // A string of up to 65535 bytes: a 2-byte little-endian length, then that many bytes (fewer
  // when the input ends first).
  std::string_view Piece() {
    const size_t length = Byte() | (size_t{Byte()} << 8);
    const std::string_view piece = rest_.substr(0, length);
    rest_.remove_prefix(piece.size());
    return piece;
  }

  // Everything not consumed yet.
  std::string_view Rest() {
    const std::string_view rest = rest_;
    rest_ = std::string_view();
    return rest;
  }

 private:
  std::string_view rest_;
};

}  // namespace delaybridge::fuzz
