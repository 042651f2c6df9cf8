// Finds the stores under the directory given to delaylog-dump: the directory itself when it is
// a store, else every store directory directly inside it (the bridge keeps one per delay-topic
// partition: <storage.dir>/<topic>-<partition>/). Reads directory listings only.
//
// Thread-safety: a free function; safe to call from any thread.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::dump {

// Store directories, sorted. NotFound for a missing path; InvalidArgument for a path that is
// not a directory, or a directory that is neither a store nor holds one.
Result<std::vector<std::string>> LocateStores(const std::string& path);

}  // namespace delaybridge::dump
