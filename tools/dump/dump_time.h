// Times as delaylog-dump prints and parses them: ISO 8601 UTC with milliseconds
// ("2026-11-22T16:00:01.250Z"), and the --second / --hour arguments. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace delaybridge::dump {

// "YYYY-MM-DDTHH:MM:SS.mmmZ" of epoch_ms (years 0000..9999).
std::string IsoMs(int64_t epoch_ms);

// --second: epoch seconds ("1795000000") or an ISO UTC time "YYYY-MM-DDTHH:MM:SS" with an
// optional ".mmm" (ignored: the second containing it) and an optional "Z".
Result<int64_t> ParseSecondArg(std::string_view text);

// --hour: "YYYY-MM-DDTHH" (UTC), as hour files are named; returns the epoch hour.
Result<int64_t> ParseHourArg(std::string_view text);

}  // namespace delaybridge::dump
