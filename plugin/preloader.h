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

// How far one walk goes. Each second is read whole, and `loaded` counts the records this walk
// loaded before it:
// - a second before due_second falls due within kPreloadLeadMs: loaded while loaded <
//   due_budget, so the budget can be exceeded by that second's records;
// - a later second before near_second, when its records (the head table's count) fit:
//   loaded + count <= near_budget;
// - a later second before horizon_second, when they fit in ahead_budget.
struct PreloadReach {
  int64_t due_second = 0;
  size_t due_budget = 0;
  int64_t near_second = 0;
  size_t near_budget = 0;
  int64_t horizon_second = 0;
  size_t ahead_budget = 0;
};

// How long before it falls due a second is loaded even when memory is short. A walk runs every
// 100 ms, so a second is read 400-500 ms before it falls due; a backlog drains, read and
// delivered, at 646,000 records a second with the defaults (docs/BENCHMARKS.md, "Draining a
// backlog"), so a second of 150,000 records is read in about half of that.
inline constexpr int64_t kPreloadLeadMs = 500;

// The bridge's reach for a store at now_ms, with in_memory records held and a bound of
// max_in_memory (wheel.max_preloaded_records):
// - a second falling due within kPreloadLeadMs is loaded up to the bound, since holding it back
//   makes its records late, not fewer;
// - the next second as soon as it fits below three quarters of the bound;
// - seconds further ahead, up to lookahead_seconds, when they fit below half of it.
// Records the ingest side appends to seconds already loaded go to memory at once: the room
// above those fractions is theirs. So the preloader alone brings memory to the bound, where
// consumption pauses, only when what is left of this second and the one falling due exceed it.
// A second holding more than half the bound is loaded half a second ahead rather than a whole
// one, which lets a stream of up to about two thirds of the bound a second (less the records
// delivered and not yet acknowledged) run without pausing. When memory is short, the lookahead
// shrinks instead and those seconds wait on disk.
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
