// DumpOptions: delaylog-dump's command line, parsed into what to show and how. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::dump {

enum class DumpMode { kSummary, kHour, kSecond, kFindSource, kFindKey, kVerify, kHelp };

struct DumpOptions {
  DumpMode mode = DumpMode::kSummary;
  std::string path;          // one store directory, or a storage root holding store directories
  int64_t epoch_hour = 0;    // --hour
  int64_t epoch_second = 0;  // --second
  std::string source_topic;  // --find-source topic/partition/offset
  int32_t source_partition = 0;
  int64_t source_offset = 0;
  std::string key;    // --find-key
  bool json = false;  // one JSON object per line
  bool hex = false;   // keys, values and header values also in hex
  bool full = false;  // whole values instead of a preview
};

// args excludes the program name. InvalidArgument with a one-line reason on any usage error.
Result<DumpOptions> ParseDumpOptions(const std::vector<std::string>& args);

// The --help text.
std::string DumpUsage();

}  // namespace delaybridge::dump
