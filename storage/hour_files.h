// Names of the files of one delivery hour (docs/storage-format.md "Directory"):
// "2026-11-22T16.log", ".idx", ".heads", named by the hour's UTC start. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace delaybridge::storage {

inline constexpr std::string_view kDataSuffix = ".log";
inline constexpr std::string_view kIndexSuffix = ".idx";
inline constexpr std::string_view kHeadsSuffix = ".heads";

// "YYYY-MM-DDTHH" of epoch_hour (hours since 1970-01-01T00Z, years 1970..9999).
std::string HourName(int64_t epoch_hour);

// Inverse of HourName; nullopt for anything that is not exactly such a name.
std::optional<int64_t> ParseHourName(std::string_view name);

struct HourPaths {
  std::string data;
  std::string index;
  std::string heads;
};
HourPaths PathsOfHour(const std::string& dir, int64_t epoch_hour);

}  // namespace delaybridge::storage
