// RunConcurrently: runs independent fdatasync tasks on a few short-lived threads. Issued
// together, the fdatasyncs of many hour files share journal commits and device cache flushes
// instead of paying one each in turn; group commit (docs/storage-format.md "Writing and the
// sync order") needs only that all of them finish before the head tables are written.
// Thread-safety: the tasks must not touch shared state; the call returns after all finished.
#pragma once

#include <functional>
#include <vector>

#include "core/status.h"

namespace delaybridge::storage {

inline constexpr size_t kMaxSyncThreads = 8;

// Runs every task (on up to kMaxSyncThreads threads, the caller's included) and returns the
// first failure, after all of them have finished.
Status RunConcurrently(const std::vector<std::function<Status()>>& tasks);

}  // namespace delaybridge::storage
