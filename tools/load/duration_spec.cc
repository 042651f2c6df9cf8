#include "tools/load/duration_spec.h"

#include <string>

#include "core/duration.h"

namespace delaybridge::load {

Result<int64_t> ParseDurationMs(std::string_view text) {
  auto ms = delaybridge::ParseDurationMs(text, BareNumber::kMilliseconds);
  if (!ms.ok()) return ms.status().WithContext("duration '" + std::string(text) + "'");
  return ms;
}

}  // namespace delaybridge::load
