#include "tests/support/bridge_log.h"

#include <time.h>  // timegm

#include <cstdio>
#include <ctime>
#include <sstream>
#include <string_view>

namespace delaybridge::testing {
namespace {

constexpr std::string_view kLost = " partition(s) lost: ";
constexpr std::string_view kRevokeWarning = "WARN  revoke: ";
constexpr std::string_view kRefusedCommit = "commit offsets";
constexpr std::string_view kRevoked = "INFO  revoked ";
constexpr std::string_view kReleased = "INFO  released ";

// The partitions a lost-assignment line names: "<t-0>, <t-1> (..." after kLost.
std::set<std::string> LostPartitionNames(const std::string& line, size_t names_at) {
  const size_t first = names_at + kLost.size();
  std::istringstream names(line.substr(first, line.find(" (", first) - first));
  std::set<std::string> partitions;
  for (std::string name; std::getline(names >> std::ws, name, ',');) partitions.insert(name);
  return partitions;
}

}  // namespace

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

std::vector<UncommittedHandOver> UncommittedHandOversIn(const std::string& log) {
  std::vector<UncommittedHandOver> hand_overs;
  std::optional<UncommittedHandOver> refused;  // a revocation whose commit was refused
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const std::optional<int64_t> at_ms = LogLineTimeMs(line);
    if (!at_ms) continue;
    if (const size_t names_at = line.find(kLost); names_at != std::string::npos) {
      hand_overs.push_back({.at_ms = *at_ms, .partitions = LostPartitionNames(line, names_at)});
    } else if (line.find(kRevokeWarning) != std::string::npos &&
               line.find(kRefusedCommit) != std::string::npos) {
      refused = UncommittedHandOver{.at_ms = *at_ms, .partitions = {}};
    } else if (const size_t at = line.find(kRevoked); refused && at != std::string::npos) {
      const size_t name = at + kRevoked.size();
      refused->partitions.insert(line.substr(name, line.find(':', name) - name));
      refused->at_ms = *at_ms;
    } else if (refused && line.find(kReleased) != std::string::npos) {
      hand_overs.push_back(std::move(*refused));
      refused.reset();
    }
  }
  if (refused) hand_overs.push_back(std::move(*refused));
  return hand_overs;
}

}  // namespace delaybridge::testing
