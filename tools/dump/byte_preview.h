// How delaylog-dump shows record keys, values and headers, which are arbitrary bytes: a
// printable preview (C-style escapes for anything not printable ASCII, cut at a limit unless
// --full) or hex. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace delaybridge::dump {

// Bytes a preview shows when --full is not given.
inline constexpr size_t kPreviewBytes = 64;

// order-17, caf\xc3\xa9\n, {\"a\":1} ...; when cut, ends with "...(+N bytes)". max_bytes 0: no
// limit.
std::string PrintablePreview(std::string_view bytes, size_t max_bytes);

// Lower-case hex, two digits per byte, no separators; cut like PrintablePreview.
std::string HexBytes(std::string_view bytes, size_t max_bytes);

}  // namespace delaybridge::dump
