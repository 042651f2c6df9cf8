// DeliveryCheckpoint: the delivered position of one store, kept in a small file of two slots
// (docs/storage-format.md "Checkpoint"). Each write overwrites the older slot in place and
// fdatasyncs it, so a crash at any instruction leaves the slot written before intact: a reader
// finds either the old or the new checkpoint. The file is created whole (write temp, fdatasync,
// rename, fsync dir), so no write leaves a CHECKPOINT without a valid slot. Overwriting in
// place keeps the file's size, so its fdatasync writes one data block and no metadata: under
// 60% of the CPU and less than half the wall time of replacing the file each time
// (docs/BENCHMARKS.md, "Checkpoints written in place").
//
// Thread-safety: free functions; callers serialise writes to one path.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace delaybridge::storage {

// Records are totally ordered by (deliver_at_ms, ordinal). Every record ordered strictly
// before (next_deliver_at_ms, next_ordinal) has been delivered and acknowledged; nothing at
// or after it is claimed delivered.
struct DeliveryCheckpoint {
  int64_t next_deliver_at_ms = 0;
  uint32_t next_ordinal = 0;
  int64_t updated_at_ms = 0;  // wall clock of the write, for operators
};

// The checkpoint file's name inside a store directory.
inline constexpr const char* kCheckpointFileName = "CHECKPOINT";

Status WriteDeliveryCheckpoint(const std::string& store_dir, const DeliveryCheckpoint& cp);

// nullopt when the store has no checkpoint yet; Corruption when no slot passes its checks.
Result<std::optional<DeliveryCheckpoint>> ReadDeliveryCheckpoint(const std::string& store_dir);

// ---- The write in steps ----
// WriteDeliveryCheckpoint is WriteDeliveryCheckpointSteps with a hook that never stops; tests
// stop the write after any step, exactly as a crash would.

inline constexpr const char* kCheckpointTempFileName = "CHECKPOINT.tmp";

enum class CheckpointStep {
  // Creating the file (none yet, or none with a valid slot):
  kTempOpened,       // CHECKPOINT.tmp created or truncated, empty
  kTempHalfWritten,  // the first half of the bytes written
  kTempWritten,      // every byte written, not synced
  kTempSynced,       // fdatasync'ed
  kRenamed,          // renamed over CHECKPOINT, directory not synced
  kDirSynced,        // done
  // Overwriting the older slot of an existing file:
  kSlotHalfWritten,  // the first half of the slot written
  kSlotWritten,      // the whole slot written, not synced
  kSlotSynced,       // done
};

// Called after each step; returning false stops the write there (as a crash would) and makes
// it return FailedPrecondition("interrupted ...").
using CheckpointStepHook = std::function<bool(CheckpointStep)>;

Status WriteDeliveryCheckpointSteps(const std::string& store_dir, const DeliveryCheckpoint& cp,
                                    const CheckpointStepHook& continue_after);

// One slot's kCheckpointSlotSize bytes.
std::string EncodeCheckpointSlot(const DeliveryCheckpoint& cp, uint64_t generation);

// The newest valid slot of a file's bytes, and its generation (0 for a version 1 file).
struct DecodedCheckpoint {
  DeliveryCheckpoint checkpoint;
  uint64_t generation = 0;
};
// Corruption naming path when no slot is valid (or the size is impossible); FailedPrecondition
// when a valid slot has a version newer than this build's.
Result<DecodedCheckpoint> DecodeCheckpointFile(std::string_view bytes, const std::string& path);

}  // namespace delaybridge::storage
