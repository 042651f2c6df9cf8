#include "storage/hour_files.h"

#include <cstdio>

#include "storage/posix_file.h"

namespace delaybridge::storage {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct CivilDate {
  int64_t year;
  int64_t month;
  int64_t day;
};

// Inverse of DaysFromCivil (H. Hinnant's civil_from_days).
CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (m <= 2), m, d};
}

bool ParseDigits(std::string_view text, int64_t* value) {
  *value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    *value = *value * 10 + (c - '0');
  }
  return !text.empty();
}

}  // namespace

std::string HourName(int64_t epoch_hour) {
  int64_t days = epoch_hour >= 0 ? epoch_hour / 24 : (epoch_hour - 23) / 24;
  int64_t hour = epoch_hour - days * 24;
  CivilDate date = CivilFromDays(days);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld", static_cast<long long>(date.year),
                static_cast<long long>(date.month), static_cast<long long>(date.day),
                static_cast<long long>(hour));
  return buf;
}

std::optional<int64_t> ParseHourName(std::string_view name) {
  // YYYY-MM-DDTHH
  if (name.size() != 13 || name[4] != '-' || name[7] != '-' || name[10] != 'T') {
    return std::nullopt;
  }
  int64_t year, month, day, hour;
  if (!ParseDigits(name.substr(0, 4), &year) || !ParseDigits(name.substr(5, 2), &month) ||
      !ParseDigits(name.substr(8, 2), &day) || !ParseDigits(name.substr(11, 2), &hour)) {
    return std::nullopt;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23) return std::nullopt;
  int64_t days = DaysFromCivil(year, month, day);
  // Rejects impossible days such as 2026-02-30 by round-tripping.
  CivilDate check = CivilFromDays(days);
  if (check.year != year || check.month != month || check.day != day) return std::nullopt;
  return days * 24 + hour;
}

HourPaths PathsOfHour(const std::string& dir, int64_t epoch_hour) {
  std::string base = dir + "/" + HourName(epoch_hour);
  return {base + std::string(kDataSuffix), base + std::string(kIndexSuffix),
          base + std::string(kHeadsSuffix)};
}

Result<std::map<int64_t, HourFilesPresent>> ScanHourFiles(const std::string& dir) {
  Result<std::vector<std::string>> names = ListDir(dir);
  if (!names.ok()) return names.status();
  std::map<int64_t, HourFilesPresent> hours;
  for (const std::string& name : *names) {
    for (auto [suffix, member] : {std::pair{kDataSuffix, &HourFilesPresent::data},
                                  std::pair{kIndexSuffix, &HourFilesPresent::index},
                                  std::pair{kHeadsSuffix, &HourFilesPresent::heads}}) {
      if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
      std::optional<int64_t> hour = ParseHourName(name.substr(0, name.size() - suffix.size()));
      if (hour) hours[*hour].*member = true;
    }
  }
  return hours;
}

Status RemoveHourFiles(const HourPaths& paths) {
  Status s = RemoveFile(paths.heads);
  if (s.ok()) s = RemoveFile(paths.index);
  if (s.ok()) s = RemoveFile(paths.data);
  return s;
}

}  // namespace delaybridge::storage
