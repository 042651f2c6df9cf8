// Store identity: a random id given to a partition's store directory when it is created
// (file BRIDGE_STORE_ID: 16 lowercase hex digits and a newline). The bridge puts it in the
// metadata of every offset it commits (plugin/progress_metadata.h); on assignment a local store
// is reused only when the group's last commit came from it. Any other store is from an older
// history of the partition (another instance owned it since) and is rebuilt from the delay
// topic.
//
// Thread-safety: pure functions over the file system.
#pragma once

#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

inline constexpr const char* kStoreIdFileName = "BRIDGE_STORE_ID";

// Reads the id of the store in store_dir, creating one (fsync'ed) when there is none.
Result<std::string> ReadOrCreateStoreId(const std::string& store_dir);

}  // namespace delaybridge::plugin
