#include "tools/dump/dump_time.h"

#include <cstdio>

#include "storage/format.h"
#include "storage/hour_files.h"

namespace delaybridge::dump {
namespace {

bool ParseDigits(std::string_view text, int64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  *value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    *value = *value * 10 + (c - '0');
  }
  return true;
}

// "MM:SS" as seconds into the hour, or -1.
int64_t ParseMinuteSecond(std::string_view text) {
  int64_t minute = 0, second = 0;
  if (text.size() != 5 || text[2] != ':' || !ParseDigits(text.substr(0, 2), &minute) ||
      !ParseDigits(text.substr(3, 2), &second) || minute > 59 || second > 59) {
    return -1;
  }
  return minute * 60 + second;
}

}  // namespace

std::string IsoMs(int64_t epoch_ms) {
  int64_t hour = storage::HourOfMs(epoch_ms);
  int64_t ms_in_hour = epoch_ms - hour * storage::kMsPerHour;
  char tail[16];
  std::snprintf(tail, sizeof(tail), ":%02d:%02d.%03dZ", static_cast<int>(ms_in_hour / 60000),
                static_cast<int>(ms_in_hour / 1000 % 60), static_cast<int>(ms_in_hour % 1000));
  return storage::HourName(hour) + tail;
}

Result<int64_t> ParseSecondArg(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("--second " + std::string(text) +
                                   ": expected epoch seconds (1795000000) or an ISO UTC time "
                                   "(2026-11-22T16:05:09Z)");
  };
  int64_t epoch_second = 0;
  if (ParseDigits(text, &epoch_second)) {
    if (epoch_second >= storage::kMaxDeliverAtMs / storage::kMsPerSecond) {
      return Status::InvalidArgument("--second " + std::string(text) + ": after year 9999");
    }
    return epoch_second;
  }
  std::string_view rest = text;
  if (rest.ends_with('Z')) rest.remove_suffix(1);
  if (size_t dot = rest.find('.'); dot != std::string_view::npos) {
    // Milliseconds name a time inside the second; the second is what is walked.
    int64_t ms = 0;
    std::string_view fraction = rest.substr(dot + 1);
    if (fraction.size() > 3 || !ParseDigits(fraction, &ms)) return bad();
    rest = rest.substr(0, dot);
  }
  if (rest.size() != 19 || rest[13] != ':') return bad();
  std::optional<int64_t> hour = storage::ParseHourName(rest.substr(0, 13));
  int64_t in_hour = ParseMinuteSecond(rest.substr(14));
  if (!hour || in_hour < 0) return bad();
  return *hour * storage::kSecondsPerHour + in_hour;
}

Result<int64_t> ParseHourArg(std::string_view text) {
  std::optional<int64_t> hour = storage::ParseHourName(text);
  if (!hour) {
    return Status::InvalidArgument("--hour " + std::string(text) +
                                   ": expected YYYY-MM-DDTHH in UTC (2026-11-22T16)");
  }
  return *hour;
}

}  // namespace delaybridge::dump
