// VerifyHourFiles: checks one hour's files against everything docs/storage-format.md promises
// (headers, every index entry's checksum, hour and link, every record against its entry, the
// saved head tables against the chains), collecting problems that name file and offset.
// DelayLogReader::Verify runs it for every hour (delaylog-dump --verify).
//
// Thread-safety: none; one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "storage/read_only_hour.h"

namespace delaybridge::storage {

struct VerifyProblem {
  std::string file;
  uint64_t offset = 0;
  std::string what;
  // True for a partial entry or unindexed data at the very end of a file: what a write in
  // progress (or a crash the next Open will repair) looks like.
  bool at_tail = false;
};

struct VerifyReport {
  std::vector<VerifyProblem> problems;
  uint64_t hours = 0;
  uint64_t entries = 0;     // index entries examined
  uint64_t records_ok = 0;  // entries whose record passed every check
  bool checkpoint_present = false;
  bool clean() const { return problems.empty(); }
};

// Appends the problems of the hour's files (opened by OpenReadOnlyHour) to *report. An error:
// the files could not be read (not a finding).
Status VerifyHourFiles(const std::string& dir, int64_t epoch_hour, ReadOnlyHour* files,
                       VerifyReport* report);

}  // namespace delaybridge::storage
