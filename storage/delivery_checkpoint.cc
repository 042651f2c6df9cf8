#include "storage/delivery_checkpoint.h"

#include "storage/coding.h"
#include "storage/crc32c.h"
#include "storage/format.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

std::string EncodeCheckpoint(const DeliveryCheckpoint& cp) {
  std::string out;
  PutFixed32(&out, kCheckpointMagic);
  PutFixed32(&out, kFormatVersion);
  PutFixed64(&out, static_cast<uint64_t>(cp.next_deliver_at_ms));
  PutFixed32(&out, cp.next_ordinal);
  PutFixed32(&out, 0);
  PutFixed64(&out, static_cast<uint64_t>(cp.updated_at_ms));
  PutFixed32(&out, crc32c::Value(out.data(), out.size()));
  PutFixed32(&out, 0);
  return out;
}

Result<DeliveryCheckpoint> DecodeCheckpoint(const std::string& bytes, const std::string& path) {
  if (bytes.size() != kCheckpointFileSize) {
    return Status::Corruption(path + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                              std::to_string(kCheckpointFileSize));
  }
  const char* p = bytes.data();
  if (DecodeFixed32(p) != kCheckpointMagic) {
    return Status::Corruption(path + " at offset 0: bad magic, not a checkpoint");
  }
  if (DecodeFixed32(p + 32) != crc32c::Value(p, 32)) {
    return Status::Corruption(path + " at offset 32: checksum mismatch");
  }
  uint32_t version = DecodeFixed32(p + 4);
  if (version > kFormatVersion) {
    return Status::FailedPrecondition(path + ": format version " + std::to_string(version) +
                                      " is newer than this build supports (" +
                                      std::to_string(kFormatVersion) + ")");
  }
  DeliveryCheckpoint cp;
  cp.next_deliver_at_ms = static_cast<int64_t>(DecodeFixed64(p + 8));
  cp.next_ordinal = DecodeFixed32(p + 16);
  cp.updated_at_ms = static_cast<int64_t>(DecodeFixed64(p + 24));
  return cp;
}

Status WriteDeliveryCheckpointSteps(const std::string& store_dir, const DeliveryCheckpoint& cp,
                                    const CheckpointStepHook& continue_after) {
  const std::string temp_path = store_dir + "/" + kCheckpointTempFileName;
  const std::string final_path = store_dir + "/" + kCheckpointFileName;
  auto stop = [&](CheckpointStep step) { return !continue_after(step); };
  auto interrupted = [&](const char* where) {
    return Status::FailedPrecondition("checkpoint write interrupted " + std::string(where));
  };
  std::string bytes = EncodeCheckpoint(cp);

  Result<PosixFile> temp = PosixFile::Open(temp_path, PosixFile::Mode::kCreateReadWrite);
  if (!temp.ok()) return temp.status();
  if (Status s = temp->Truncate(0); !s.ok()) return s;
  if (stop(CheckpointStep::kTempOpened)) return interrupted("after opening the temp file");
  size_t half = bytes.size() / 2;
  if (Status s = temp->WriteAt(0, std::string_view(bytes).substr(0, half)); !s.ok()) return s;
  if (stop(CheckpointStep::kTempHalfWritten)) return interrupted("while writing the temp file");
  if (Status s = temp->WriteAt(half, std::string_view(bytes).substr(half)); !s.ok()) return s;
  if (stop(CheckpointStep::kTempWritten)) return interrupted("before syncing the temp file");
  if (Status s = temp->DataSync(); !s.ok()) return s;
  if (stop(CheckpointStep::kTempSynced)) return interrupted("before the rename");
  if (Status s = RenameFile(temp_path, final_path); !s.ok()) return s;
  if (stop(CheckpointStep::kRenamed)) return interrupted("before syncing the directory");
  if (Status s = SyncDir(store_dir); !s.ok()) return s;
  if (stop(CheckpointStep::kDirSynced)) return interrupted("after syncing the directory");
  return Status::Ok();
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
  // One byte more than expected, so that a too-long file is detected.
  if (Status s = file->ReadAt(0, kCheckpointFileSize + 1, &bytes); !s.ok()) return s;
  Result<DeliveryCheckpoint> cp = DecodeCheckpoint(bytes, path);
  if (!cp.ok()) return cp.status();
  return std::optional<DeliveryCheckpoint>(*cp);
}

}  // namespace delaybridge::storage
