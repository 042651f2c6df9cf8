// Preloader: walks a store's per-second index chains ahead of time, from the store's
// preloaded_until_second up to a horizon (now + preload_seconds, closer when memory is short),
// so records are in memory before they are due and a slow disk never makes a delivery late. Seconds
// are loaded whole and in order; records ordered before the store's opening checkpoint (delivered
// before a restart) are skipped, and so are records a cancel in the same second names (a cancel is
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

// How far one walk goes. Seconds before due_second fall due within the next second: they are
// loaded while fewer than due_budget records were loaded by this walk. Later seconds, up to
// horizon_second, are loaded while fewer than ahead_budget were. (Each second is loaded whole,
// so a budget can be exceeded by one second's records.)
struct PreloadReach {
  int64_t due_second = 0;
  size_t due_budget = 0;
  int64_t horizon_second = 0;
  size_t ahead_budget = 0;
};

// The bridge's reach for a store at now_ms, with in_memory records held and a bound of
// max_in_memory (wheel.max_preloaded_records). Seconds about to fall due are loaded up to the
// bound, since holding them back makes them late, not fewer. Seconds further ahead are loaded
// only while the records held stay below half the bound: records the ingest side appends to
// seconds already loaded go to memory at once, and that half is their room, so a load that
// keeps memory near the bound does not make consumption pause. When memory is short, the
// lookahead shrinks instead and those seconds wait on disk.
PreloadReach BridgePreloadReach(const PartitionStore& store, int64_t now_ms,
                                int64_t lookahead_seconds, size_t in_memory, size_t max_in_memory);

// Loads seconds from store.preloaded_until_second() on as far as reach allows, in order. Each
// loaded record joins the store's tracker, then on_record is called. on_corrupt is called with a
// message for every record that fails a check (verified damage: only those are ever skipped, so
// a checkpoint never passes a record that is merely unreadable for now). Advances
// store.preloaded_until_second() past the seconds loaded (and the empty ones before the next
// second with records). Returns an error only when the store cannot be walked at all.
Result<PreloadResult> PreloadStore(
    PartitionStore& store, const PreloadReach& reach,
    const std::function<void(RecordPosition, EncodedRecord&&)>& on_record,
    const std::function<void(const std::string&)>& on_corrupt);

}  // namespace delaybridge::plugin
