// Recovery of one delivery hour at DelayLogStore::Open (docs/storage-format.md "Recovery"):
// verifies the index tail not covered by the saved head table against the data, cuts torn
// tails, drops entries whose records are missing, reports corrupt records, and saves a head
// table covering everything that survived. Free function; the caller owns the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "storage/delay_log_store.h"
#include "storage/hour_appender.h"

namespace delaybridge::storage {

// Returns the hour's state after repair, or nullopt when nothing of it survived (its files
// are then deleted). Problems and counters go to *report. A file that is not ours, or of a
// newer format version, is an error: Open must not touch what it does not understand.
Result<std::optional<HourState>> RecoverHour(const std::string& dir, int64_t epoch_hour,
                                             RecoveryReport* report);

}  // namespace delaybridge::storage
