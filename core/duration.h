// ParseDurationMs: DelayBridge's one duration grammar, for the configuration and the tools: an
// unsigned decimal integer and a unit, ms, s, m, h or d ("500ms", "30s", "15m", "2h", "3650d").
// A command line may also take a bare number as milliseconds (BareNumber::kMilliseconds).
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace delaybridge {

enum class BareNumber { kRefused, kMilliseconds };

// InvalidArgument when text is not a duration or overflows 64-bit milliseconds. The message
// says what is wrong without quoting text: callers add where it came from.
Result<int64_t> ParseDurationMs(std::string_view text, BareNumber bare = BareNumber::kRefused);

}  // namespace delaybridge
