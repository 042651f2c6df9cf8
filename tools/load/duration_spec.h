// DurationSpec: the durations of delaybridge-load's command line: DelayBridge's duration grammar
// (core/duration.h: "250ms", "5s", "2m", "3h", "30d") and a bare number as milliseconds.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace delaybridge::load {

// Returns the duration in milliseconds, or InvalidArgument naming the text when it is empty,
// negative, has an unknown unit or overflows int64 milliseconds.
Result<int64_t> ParseDurationMs(std::string_view text);

}  // namespace delaybridge::load
