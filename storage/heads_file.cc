#include "storage/heads_file.h"

#include "storage/posix_file.h"

namespace delaybridge::storage {

Result<std::optional<HeadsSlot>> LoadHeads(const std::string& path, int64_t epoch_hour) {
  Result<bool> exists = FileExists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return std::optional<HeadsSlot>();
  Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kReadOnly);
  if (!file.ok()) return file.status();
  std::string bytes;
  Status s = file->ReadAt(0, kHeadsFileSize, &bytes);
  if (!s.ok()) return s;
  if (bytes.size() < kFileHeaderSize) return std::optional<HeadsSlot>();  // torn creation
  s = CheckFileHeader(bytes, kHeadsMagic, epoch_hour, path);
  if (!s.ok()) return s;
  std::optional<HeadsSlot> best;
  for (uint64_t slot_index = 0; slot_index < 2; ++slot_index) {
    size_t offset = kFileHeaderSize + slot_index * kHeadsSlotSize;
    if (bytes.size() < offset + kHeadsSlotSize) break;
    HeadsSlot slot;
    if (!DecodeHeadsSlot(std::string_view(bytes).substr(offset, kHeadsSlotSize), &slot)) continue;
    // A slot whose generation does not match its place was not written by SaveHeads.
    if (HeadsSlotOffset(slot.generation) != offset) continue;
    if (!best || slot.generation > best->generation) best = slot;
  }
  return best;
}

Status SaveHeads(const std::string& path, int64_t epoch_hour, const HeadsSlot& slot) {
  Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kCreateReadWrite);
  if (!file.ok()) return file.status();
  Result<uint64_t> size = file->Size();
  if (!size.ok()) return size.status();
  bool created = *size < kHeadsFileSize;
  if (created) {
    // Both slots start zeroed (invalid CRC), so a reader never mistakes them for a table.
    std::string fresh = EncodeFileHeader(kHeadsMagic, epoch_hour);
    fresh.resize(kHeadsFileSize, '\0');
    Status s = file->WriteAt(0, fresh);
    if (!s.ok()) return s;
  }
  // No fdatasync: the caller synced the data and index this slot covers before writing it, so
  // whenever the slot reaches the disk, what it covers is already there. Until it does, the
  // previous slot (or none) is used and recovery verifies a longer tail.
  return file->WriteAt(HeadsSlotOffset(slot.generation), EncodeHeadsSlot(slot));
}

}  // namespace delaybridge::storage
