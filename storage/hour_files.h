// The files of one delivery hour (docs/storage-format.md "Directory"): "2026-11-22T16.log",
// ".idx", ".heads", named by the hour's UTC start; finding them in a store directory and removing
// them. The one place these rules live. Free functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

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

// Which of an hour's files a directory holds.
struct HourFilesPresent {
  bool data = false;
  bool index = false;
  bool heads = false;
};
// The hours with at least one file in dir, in order; other names are ignored. An hour is
// present while its data file exists: the rest are leftovers of one being removed.
Result<std::map<int64_t, HourFilesPresent>> ScanHourFiles(const std::string& dir);

// Removes an hour's files, the data file last (so an interrupted removal leaves leftovers, never
// an hour without its index). Files already gone are fine.
Status RemoveHourFiles(const HourPaths& paths);

}  // namespace delaybridge::storage
