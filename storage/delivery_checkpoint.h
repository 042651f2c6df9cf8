// DeliveryCheckpoint: the delivered position of one store, kept in a tiny file that is
// replaced atomically (write temp, fsync, rename, fsync dir) so that a crash at any
// instruction leaves either the old or the new checkpoint (docs/storage-format.md).
// File layout: docs/storage-format.md "Checkpoint" (magic, version, CRC32C).
//
// Thread-safety: free functions; callers serialise writes to one path.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

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

// nullopt when the store has no checkpoint yet; Corruption when the file fails its checks.
Result<std::optional<DeliveryCheckpoint>> ReadDeliveryCheckpoint(const std::string& store_dir);

// ---- The replacement in steps ----
// WriteDeliveryCheckpoint is WriteDeliveryCheckpointSteps with a hook that never stops; tests
// stop the replacement after any step, exactly as a crash would.

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
