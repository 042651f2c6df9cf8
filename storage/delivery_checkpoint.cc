#include "storage/delivery_checkpoint.h"

#include "storage/coding.h"
#include "storage/crc32c.h"
#include "storage/format.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {
namespace {

// Byte offsets inside a slot (docs/storage-format.md "Checkpoint"). A version 1 file is one
// record with the same fields up to updated_at_ms and its CRC where a slot has its generation.
constexpr size_t kVersionAt = 4;
constexpr size_t kDeliverAtAt = 8;
constexpr size_t kOrdinalAt = 16;
constexpr size_t kUpdatedAtAt = 24;
constexpr size_t kGenerationAt = 32;
constexpr size_t kSlotCrcAt = 40;
constexpr size_t kV1CrcAt = 32;

// A slot's verdict: valid (with its checkpoint), newer than this build, or why not valid.
struct SlotReading {
  std::optional<DecodedCheckpoint> decoded;
  std::optional<uint32_t> newer_version;
  std::string problem;
};

DeliveryCheckpoint FieldsOf(const char* p) {
  DeliveryCheckpoint cp;
  cp.next_deliver_at_ms = static_cast<int64_t>(DecodeFixed64(p + kDeliverAtAt));
  cp.next_ordinal = DecodeFixed32(p + kOrdinalAt);
  cp.updated_at_ms = static_cast<int64_t>(DecodeFixed64(p + kUpdatedAtAt));
  return cp;
}

// The slot at bytes[offset..]; a version 1 record counts only at offset 0 (its file's only one).
SlotReading ReadSlot(std::string_view bytes, size_t offset) {
  SlotReading reading;
  if (bytes.size() < offset + kCheckpointV1FileSize) {
    reading.problem = "absent";
    return reading;
  }
  const char* p = bytes.data() + offset;
  if (DecodeFixed32(p) != kCheckpointMagic) {
    reading.problem = "bad magic";
    return reading;
  }
  const uint32_t version = DecodeFixed32(p + kVersionAt);
  if (version == 1 && offset == 0) {
    if (DecodeFixed32(p + kV1CrcAt) != crc32c::Value(p, kV1CrcAt)) {
      reading.problem = "checksum mismatch";
    } else {
      reading.decoded = DecodedCheckpoint{FieldsOf(p), 0};
    }
    return reading;
  }
  if (bytes.size() < offset + kCheckpointSlotSize) {
    reading.problem = "cut off";
  } else if (DecodeFixed32(p + kSlotCrcAt) != crc32c::Value(p, kSlotCrcAt)) {
    reading.problem = "checksum mismatch";
  } else if (version > kCheckpointVersion) {
    reading.newer_version = version;
  } else if (version != kCheckpointVersion) {
    reading.problem = "version " + std::to_string(version) + " in a slot";
  } else {
    reading.decoded = DecodedCheckpoint{FieldsOf(p), DecodeFixed64(p + kGenerationAt)};
  }
  return reading;
}

Status Interrupted(const char* where) {
  return Status::FailedPrecondition("checkpoint write interrupted " + std::string(where));
}

// A file of both slots, the checkpoint in the one its generation names and the other empty
// (no valid magic), written to the temporary file and renamed over CHECKPOINT.
Status CreateCheckpointFile(const std::string& store_dir, const DeliveryCheckpoint& cp,
                            uint64_t generation, const CheckpointStepHook& continue_after) {
  const std::string temp_path = store_dir + "/" + kCheckpointTempFileName;
  const std::string final_path = store_dir + "/" + kCheckpointFileName;
  auto stop = [&](CheckpointStep step) { return !continue_after(step); };
  std::string bytes(kCheckpointFileSize, '\0');
  bytes.replace(CheckpointSlotOffset(generation), kCheckpointSlotSize,
                EncodeCheckpointSlot(cp, generation));

  Result<PosixFile> temp = PosixFile::Open(temp_path, PosixFile::Mode::kCreateReadWrite);
  if (!temp.ok()) return temp.status();
  if (Status s = temp->Truncate(0); !s.ok()) return s;
  if (stop(CheckpointStep::kTempOpened)) return Interrupted("after opening the temp file");
  const size_t half = bytes.size() / 2;
  if (Status s = temp->WriteAt(0, std::string_view(bytes).substr(0, half)); !s.ok()) return s;
  if (stop(CheckpointStep::kTempHalfWritten)) return Interrupted("while writing the temp file");
  if (Status s = temp->WriteAt(half, std::string_view(bytes).substr(half)); !s.ok()) return s;
  if (stop(CheckpointStep::kTempWritten)) return Interrupted("before syncing the temp file");
  if (Status s = temp->DataSync(); !s.ok()) return s;
  if (stop(CheckpointStep::kTempSynced)) return Interrupted("before the rename");
  if (Status s = RenameFile(temp_path, final_path); !s.ok()) return s;
  if (stop(CheckpointStep::kRenamed)) return Interrupted("before syncing the directory");
  if (Status s = SyncDir(store_dir); !s.ok()) return s;
  if (stop(CheckpointStep::kDirSynced)) return Interrupted("after syncing the directory");
  return Status::Ok();
}

// Overwrites the slot the next generation names: the older one, or the empty one.
Status OverwriteOlderSlot(PosixFile* file, const DeliveryCheckpoint& cp, uint64_t generation,
                          const CheckpointStepHook& continue_after) {
  auto stop = [&](CheckpointStep step) { return !continue_after(step); };
  const std::string slot = EncodeCheckpointSlot(cp, generation);
  const uint64_t offset = CheckpointSlotOffset(generation);
  const size_t half = slot.size() / 2;
  if (Status s = file->WriteAt(offset, std::string_view(slot).substr(0, half)); !s.ok()) return s;
  if (stop(CheckpointStep::kSlotHalfWritten)) return Interrupted("while writing the slot");
  if (Status s = file->WriteAt(offset + half, std::string_view(slot).substr(half)); !s.ok()) {
    return s;
  }
  if (stop(CheckpointStep::kSlotWritten)) return Interrupted("before syncing the slot");
  if (Status s = file->DataSync(); !s.ok()) return s;
  if (stop(CheckpointStep::kSlotSynced)) return Interrupted("after syncing the slot");
  return Status::Ok();
}

}  // namespace

std::string EncodeCheckpointSlot(const DeliveryCheckpoint& cp, uint64_t generation) {
  std::string out;
  PutFixed32(&out, kCheckpointMagic);
  PutFixed32(&out, kCheckpointVersion);
  PutFixed64(&out, static_cast<uint64_t>(cp.next_deliver_at_ms));
  PutFixed32(&out, cp.next_ordinal);
  PutFixed32(&out, 0);
  PutFixed64(&out, static_cast<uint64_t>(cp.updated_at_ms));
  PutFixed64(&out, generation);
  PutFixed32(&out, crc32c::Value(out.data(), out.size()));
  PutFixed32(&out, 0);
  return out;
}

Result<DecodedCheckpoint> DecodeCheckpointFile(std::string_view bytes, const std::string& path) {
  // At least a version 1 file; a version 1 file whose first slot write was cut short lies in
  // between.
  if (bytes.size() < kCheckpointV1FileSize || bytes.size() > kCheckpointFileSize) {
    return Status::Corruption(path + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                              std::to_string(kCheckpointV1FileSize) + " to " +
                              std::to_string(kCheckpointFileSize));
  }
  const SlotReading slots[] = {ReadSlot(bytes, CheckpointSlotOffset(0)),
                               ReadSlot(bytes, CheckpointSlotOffset(1))};
  std::optional<DecodedCheckpoint> newest;
  for (const SlotReading& slot : slots) {
    if (slot.newer_version) {
      return Status::FailedPrecondition(
          path + ": format version " + std::to_string(*slot.newer_version) +
          " is newer than this build supports (" + std::to_string(kCheckpointVersion) + ")");
    }
    if (slot.decoded && (!newest || slot.decoded->generation > newest->generation)) {
      newest = slot.decoded;
    }
  }
  if (!newest) {
    return Status::Corruption(path + ": no valid slot (at offset 0: " + slots[0].problem +
                              "; at offset " + std::to_string(CheckpointSlotOffset(1)) + ": " +
                              slots[1].problem + ")");
  }
  return *newest;
}

Status WriteDeliveryCheckpointSteps(const std::string& store_dir, const DeliveryCheckpoint& cp,
                                    const CheckpointStepHook& continue_after) {
  const std::string path = store_dir + "/" + kCheckpointFileName;
  Result<bool> exists = FileExists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return CreateCheckpointFile(store_dir, cp, 1, continue_after);
  Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kReadWrite);
  if (!file.ok()) return file.status();
  std::string bytes;
  if (Status s = file->ReadAt(0, kCheckpointFileSize + 1, &bytes); !s.ok()) return s;
  Result<DecodedCheckpoint> current = DecodeCheckpointFile(bytes, path);
  if (current.status().code() == Status::Code::kCorruption) {
    // No slot to keep: the file is replaced whole, as when there was none.
    return CreateCheckpointFile(store_dir, cp, 1, continue_after);
  }
  if (!current.ok()) return current.status();  // a newer build's file: left alone
  return OverwriteOlderSlot(&*file, cp, current->generation + 1, continue_after);
}

Status WriteDeliveryCheckpoint(const std::string& store_dir, const DeliveryCheckpoint& cp) {
  return WriteDeliveryCheckpointSteps(store_dir, cp, [](CheckpointStep) { return true; });
}

Result<std::optional<DeliveryCheckpoint>> ReadDeliveryCheckpoint(const std::string& store_dir) {
  const std::string path = store_dir + "/" + kCheckpointFileName;
  Result<bool> exists = FileExists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return std::optional<DeliveryCheckpoint>();
  Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kReadOnly);
  if (!file.ok()) return file.status();
  std::string bytes;
  // One byte more than a whole file, so that a too-long file is detected.
  if (Status s = file->ReadAt(0, kCheckpointFileSize + 1, &bytes); !s.ok()) return s;
  Result<DecodedCheckpoint> decoded = DecodeCheckpointFile(bytes, path);
  if (!decoded.ok()) return decoded.status();
  return std::optional<DeliveryCheckpoint>(decoded->checkpoint);
}

}  // namespace delaybridge::storage
