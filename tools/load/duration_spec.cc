#include "tools/load/duration_spec.h"

#include <charconv>
#include <limits>
#include <string>

namespace delaybridge::load {

namespace {

// Milliseconds per unit; the longest suffix is matched first so "ms" is not read as "m".
Result<int64_t> UnitMs(std::string_view unit) {
  if (unit.empty() || unit == "ms") return int64_t{1};
  if (unit == "s") return int64_t{1000};
  if (unit == "m") return int64_t{60 * 1000};
  if (unit == "h") return int64_t{3600 * 1000};
  if (unit == "d") return int64_t{24 * 3600 * 1000};
  return Status::InvalidArgument("unknown unit '" + std::string(unit) + "' (use ms, s, m, h or d)");
}

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view text) {
  const std::string context = "duration '" + std::string(text) + "'";
  int64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range) {
    return Status::InvalidArgument(context + ": number out of range");
  }
  if (ec != std::errc() || number < 0) {
    return Status::InvalidArgument(context + ": expected a non-negative number with a unit");
  }
  Result<int64_t> unit_ms = UnitMs(std::string_view(end, text.data() + text.size() - end));
  if (!unit_ms.ok()) return unit_ms.status().WithContext(context);
  if (number > std::numeric_limits<int64_t>::max() / *unit_ms) {
    return Status::InvalidArgument(context + ": overflows 64-bit milliseconds");
  }
  return number * *unit_ms;
}

}  // namespace delaybridge::load
