#include "tests/support/bridge_log.h"

#include <time.h>  // timegm

#include <cstdio>
#include <ctime>
#include <sstream>
#include <string_view>

namespace delaybridge::testing {

std::optional<int64_t> LogLineTimeMs(const std::string& line) {
  static constexpr int kTimestampChars = 24;
  std::tm utc{};
  int millis = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &utc.tm_year, &utc.tm_mon,
                  &utc.tm_mday, &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis, &consumed) != 7 ||
      consumed != kTimestampChars) {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&utc)) * 1000 + millis;
}

std::vector<LostPartitions> LostAssignmentsIn(const std::string& log) {
  static constexpr std::string_view kLost = " partition(s) lost: ";
  std::vector<LostPartitions> lost;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const size_t names_at = line.find(kLost);
    const std::optional<int64_t> at_ms = LogLineTimeMs(line);
    if (names_at == std::string::npos || !at_ms) continue;
    const size_t first = names_at + kLost.size();
    std::istringstream names(line.substr(first, line.find(" (", first) - first));
    LostPartitions event{.at_ms = *at_ms, .partitions = {}};
    for (std::string name; std::getline(names >> std::ws, name, ',');) {
      event.partitions.insert(name);
    }
    lost.push_back(std::move(event));
  }
  return lost;
}

}  // namespace delaybridge::testing
