#include "core/duration.h"

#include <charconv>
#include <limits>
#include <utility>

namespace delaybridge {

Result<int64_t> ParseDurationMs(std::string_view text, BareNumber bare) {
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  const auto bad = [bare] {
    return Status::InvalidArgument(
        std::string("must be a duration like 500ms, 30s, 15m, 2h or 3650d") +
        (bare == BareNumber::kMilliseconds ? ", or a number of milliseconds" : ""));
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return bad();
  std::string_view unit = text.substr(digits);
  if (unit.empty() && bare == BareNumber::kMilliseconds) unit = "ms";
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    int64_t count = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + digits, count);
    if (ec != std::errc() || end != text.data() + digits ||
        count > std::numeric_limits<int64_t>::max() / scale) {
      return Status::InvalidArgument("overflows 64-bit milliseconds");
    }
    return count * scale;
  }
  return bad();
}

}  // namespace delaybridge
