// Store identity: a random id given to a partition's store directory when it is created
// (file BRIDGE_STORE_ID: 16 lowercase hex digits and a newline). The bridge puts it in the
// metadata of every offset it commits (plugin/progress_metadata.h); on assignment a local store
// is reused only when the group's last commit came from it (or, below, was the one it was
// rebuilt from). Any other store is from an older history of the partition (another instance
// owned it since) and is rebuilt from the delay topic.
//
// A store rebuilt from a commit of another store remembers that commit (file TAKEN_OVER_FROM:
// the commit's metadata text and a newline). While it is still the group's last commit, nobody
// has committed since the takeover, so the store is reused when the partition comes back to it:
// its instance can lose a partition before its first commit of it lands (librdkafka before
// 2.10.0 drops the whole assignment when a commit meets a rebalance that bumped the generation).
// Emptying the store again would deliver again everything it delivered since the takeover.
// Not with exactly_once, whose stores are rebuilt from the last committed transaction.
//
// With exactly_once a store is also reused only when it was closed cleanly (file CLOSED_CLEANLY,
// written at revocation after the last transaction committed, removed when it is opened again):
// after a crash it may hold records appended after the last transaction whose source offsets
// its marker does not cover, and reading them again would store them twice.
//
// Thread-safety: pure functions over the file system.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

inline constexpr const char* kStoreIdFileName = "BRIDGE_STORE_ID";

inline constexpr const char* kTakenOverFromFileName = "TAKEN_OVER_FROM";

inline constexpr const char* kClosedCleanlyFileName = "CLOSED_CLEANLY";

// Reads the id of the store in store_dir, creating one (fsync'ed) when there is none.
Result<std::string> ReadOrCreateStoreId(const std::string& store_dir);

// Records (durably) that the store in store_dir was rebuilt from the commit with this metadata.
Status RecordTakeover(const std::string& store_dir, const std::string& commit_metadata);
// The metadata of the commit the store in store_dir was rebuilt from; nullopt if it was not (or
// the file cannot be read).
std::optional<std::string> ReadTakeover(const std::string& store_dir);

// Records (durably) that the store in store_dir was closed cleanly.
Status MarkClosedCleanly(const std::string& store_dir);
// Whether it was, removing the mark (durably) so that a crash from now on is noticed.
Result<bool> TakeClosedCleanly(const std::string& store_dir);

}  // namespace delaybridge::plugin
