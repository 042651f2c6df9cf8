// The steps of replacing a CHECKPOINT file, with a hook between them so tests can stop the
// replacement after any step, exactly as a crash would (docs/storage-format.md "Checkpoint").
// WriteDeliveryCheckpoint is this with a hook that never stops. Free functions; callers
// serialise writes to one directory.
#pragma once

#include <functional>
#include <string>

#include "core/status.h"
#include "storage/delivery_checkpoint.h"

namespace delaybridge::storage {

inline constexpr const char* kCheckpointTempFileName = "CHECKPOINT.tmp";

enum class CheckpointStep {
  kTempOpened,       // CHECKPOINT.tmp created or truncated, empty
  kTempHalfWritten,  // the first half of the bytes written
  kTempWritten,      // every byte written, not synced
  kTempSynced,       // fdatasync'ed
  kRenamed,          // renamed over CHECKPOINT, directory not synced
  kDirSynced,        // done
};

// Called after each step; returning false stops the replacement there (as a crash would) and
// makes the write return FailedPrecondition("interrupted ...").
using CheckpointStepHook = std::function<bool(CheckpointStep)>;

Status WriteDeliveryCheckpointSteps(const std::string& store_dir, const DeliveryCheckpoint& cp,
                                    const CheckpointStepHook& continue_after);

// The 40 bytes of the file, and their inverse (Corruption naming path on any failed check).
std::string EncodeCheckpoint(const DeliveryCheckpoint& cp);
Result<DeliveryCheckpoint> DecodeCheckpoint(const std::string& bytes, const std::string& path);

}  // namespace delaybridge::storage
