#include "storage/read_only_hour.h"

#include <utility>

#include "storage/block_cursor.h"
#include "storage/hour_files.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kIndexReadBytes = 256 * 1024;

Status CheckHeaderOf(const PosixFile& file, uint32_t magic, int64_t epoch_hour) {
  std::string header;
  Status s = file.ReadAt(0, kFileHeaderSize, &header);
  if (!s.ok()) return s;
  if (header.size() < kFileHeaderSize) {
    return Status::Corruption(file.path() + " at offset 0: file header is incomplete (" +
                              std::to_string(header.size()) +
                              " bytes): being created right now, or torn");
  }
  return CheckFileHeader(header, magic, epoch_hour, file.path());
}

}  // namespace

Result<ReadOnlyHour> OpenReadOnlyHour(const std::string& dir, int64_t epoch_hour,
                                      std::string* bad_file) {
  HourPaths paths = PathsOfHour(dir, epoch_hour);
  ReadOnlyHour files;
  Result<PosixFile> data = PosixFile::Open(paths.data, PosixFile::Mode::kReadOnly);
  if (!data.ok()) return data.status();
  Result<PosixFile> index = PosixFile::Open(paths.index, PosixFile::Mode::kReadOnly);
  if (!index.ok()) return index.status();
  files.data = std::move(*data);
  files.index = std::move(*index);
  // Index size first: the writer appends data before index, so every entry seen here has its
  // record inside the data size read afterwards.
  Result<uint64_t> index_bytes = files.index.Size();
  if (!index_bytes.ok()) return index_bytes.status();
  Result<uint64_t> data_bytes = files.data.Size();
  if (!data_bytes.ok()) return data_bytes.status();
  files.index_bytes = *index_bytes;
  files.data_bytes = *data_bytes;
  for (auto [file, magic] : {std::pair{&files.data, kDataMagic}, {&files.index, kIndexMagic}}) {
    if (Status s = CheckHeaderOf(*file, magic, epoch_hour); !s.ok()) {
      if (bad_file != nullptr) *bad_file = file->path();
      return s;
    }
  }
  return files;
}

uint64_t WholeEntries(uint64_t index_bytes) {
  return index_bytes < kFileHeaderSize ? 0 : (index_bytes - kFileHeaderSize) / kIndexEntrySize;
}

Status ScanEntries(const PosixFile& index, uint64_t whole_entries,
                   const std::function<bool(const IndexEntryView&)>& visit) {
  BlockCursor cursor(&index, BlockCursor::Direction::kForward, kIndexReadBytes);
  for (uint64_t position = 0; position < whole_entries; ++position) {
    IndexEntryView view;
    view.position = static_cast<uint32_t>(position);
    view.index_offset = IndexEntryOffset(position);
    std::string_view bytes;
    if (Status s = cursor.Read(view.index_offset, kIndexEntrySize, &bytes); !s.ok()) return s;
    if (bytes.size() < kIndexEntrySize) break;  // shrank while reading (truncated by recovery)
    view.checksum_ok = DecodeIndexEntry(bytes.data(), &view.entry);
    if (!visit(view)) break;
  }
  return Status::Ok();
}

}  // namespace delaybridge::storage
