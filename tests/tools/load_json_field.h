// JsonNumber: reads one numeric field from delaybridge-load's flat --json report, which is all
// the load tool's tests need (no JSON library in the dependency list).
//
// Thread-safety: pure function.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace delaybridge::load {

// The value of the first "name":<number> in `json`, or nullopt.
inline std::optional<double> JsonNumber(const std::string& json, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const size_t at = json.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* start = json.c_str() + at + key.size();
  char* end = nullptr;
  const double value = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return value;
}

}  // namespace delaybridge::load
