// Preloader: walks a store's per-second index chains ahead of time, from the store's
// preloaded_until_second up to a horizon (now + preload_seconds), so records are in memory
// before they are due and a slow disk never makes a delivery late. Seconds are loaded whole
// and in order; records ordered before the store's opening checkpoint (delivered before a
// restart) are skipped, and so are records a cancel in the same second names (a cancel is
// stored in its target's second: PartitionStore::ApplyCancel).
//
// Thread-safety: none; runs on the bridge's event-loop thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "plugin/delivery_tracker.h"
#include "plugin/encoded_record.h"
#include "plugin/partition_store.h"
#include "plugin/stored_cancel.h"

namespace delaybridge::plugin {

struct PreloadResult {
  size_t loaded = 0;     // records handed to on_record
  size_t corrupt = 0;    // records skipped because they failed a check (each reported)
  size_t cancelled = 0;  // records skipped because a cancel in their second names them
  // Not ok: a second could not be read for a reason that may pass (out of descriptors, an I/O
  // error, a full disk while flushing the hour's buffer). The walk stopped before that second;
  // the next walk reads it again.
  Status retry;
};

// Loads seconds [store.preloaded_until_second(), horizon_second) while fewer than budget
// records were loaded (the last second is loaded whole, so budget can be exceeded by one
// second's records). Each loaded record joins the store's tracker, then on_record is called.
// on_corrupt is called with a message for every record that fails a check (verified damage:
// only those are ever skipped, so a checkpoint never passes a record that is merely unreadable
// for now). Advances store.preloaded_until_second() past the seconds loaded. Returns an error
// only when the store cannot be walked at all.
Result<PreloadResult> PreloadStore(
    PartitionStore& store, int64_t horizon_second, size_t budget,
    const std::function<void(RecordPosition, EncodedRecord&&)>& on_record,
    const std::function<void(const std::string&)>& on_corrupt);

}  // namespace delaybridge::plugin
