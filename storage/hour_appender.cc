#include "storage/hour_appender.h"

#include <algorithm>

#include "storage/heads_file.h"

namespace delaybridge::storage {

HourAppender::HourAppender(std::string dir, int64_t epoch_hour)
    : dir_(std::move(dir)),
      epoch_hour_(epoch_hour),
      paths_(PathsOfHour(dir_, epoch_hour)),
      data_buffer_(kWriteBufferBytes),
      index_buffer_(kIndexBufferBytes),
      cells_(std::make_unique<HeadCells>()) {}

Result<std::unique_ptr<HourAppender>> HourAppender::Create(const std::string& dir,
                                                           int64_t epoch_hour) {
  std::unique_ptr<HourAppender> hour(new HourAppender(dir, epoch_hour));
  Result<PosixFile> data = PosixFile::Open(hour->paths_.data, PosixFile::Mode::kCreateReadWrite);
  if (!data.ok()) return data.status();
  Result<PosixFile> index = PosixFile::Open(hour->paths_.index, PosixFile::Mode::kCreateReadWrite);
  if (!index.ok()) return index.status();
  hour->data_ = std::move(*data);
  hour->index_ = std::move(*index);
  // Truncating first makes Create safe over leftovers of an hour deleted by retention.
  Status s = hour->data_.Truncate(0);
  if (s.ok()) s = hour->index_.Truncate(0);
  if (s.ok()) s = hour->data_.WriteAt(0, EncodeFileHeader(kDataMagic, epoch_hour));
  if (s.ok()) s = hour->index_.WriteAt(0, EncodeFileHeader(kIndexMagic, epoch_hour));
  if (s.ok()) s = RemoveFile(hour->paths_.heads);
  if (!s.ok()) return s;
  hour->data_written_ = hour->data_bytes_ = kFileHeaderSize;
  hour->index_written_ = kFileHeaderSize;
  hour->dirty_ = true;
  return hour;
}

Result<std::unique_ptr<HourAppender>> HourAppender::Reopen(const std::string& dir,
                                                           int64_t epoch_hour,
                                                           const HourState& state) {
  std::unique_ptr<HourAppender> hour(new HourAppender(dir, epoch_hour));
  Result<PosixFile> data = PosixFile::Open(hour->paths_.data, PosixFile::Mode::kReadWrite);
  if (!data.ok()) return data.status();
  Result<PosixFile> index = PosixFile::Open(hour->paths_.index, PosixFile::Mode::kReadWrite);
  if (!index.ok()) return index.status();
  hour->data_ = std::move(*data);
  hour->index_ = std::move(*index);
  hour->data_written_ = hour->data_bytes_ = state.data_bytes;
  hour->entries_ = state.entries;
  hour->index_written_ = IndexEntryOffset(state.entries);
  Result<std::optional<HeadsSlot>> slot = LoadHeads(hour->paths_.heads, epoch_hour);
  if (!slot.ok()) return slot.status();
  uint64_t covered = slot->has_value() ? (*slot)->covered : 0;
  if (covered != state.entries) {
    return Status::Corruption(hour->paths_.heads + ": head table does not cover the " +
                              std::to_string(state.entries) +
                              " entries of the index; reopen the store to rebuild it");
  }
  if (slot->has_value()) {
    *hour->cells_ = (*slot)->cells;
    hour->heads_generation_ = (*slot)->generation;
  }
  hour->heads_covered_ = covered;
  hour->index_synced_entries_ = state.entries;  // a closed hour was synced whole
  return hour;
}

Result<uint32_t> HourAppender::Append(int64_t deliver_at_ms, std::string_view payload) {
  if (entries_ >= kMaxEntriesPerHour) {
    return Status::FailedPrecondition(paths_.index + ": hour is full (" + std::to_string(entries_) +
                                      " entries)");
  }
  // Loaded first: with many hours open the cell is often not in cache, and its load then
  // overlaps the record's checksum instead of stalling the entry's encoding after it.
  HeadCell& cell = CellOf(*cells_, deliver_at_ms);
  const uint32_t pre_index = cell.head;
  const uint64_t log_offset = data_bytes_;
  const size_t record_bytes = kRecordHeaderSize + payload.size();
  uint32_t record_crc = 0;
  if (data_buffer_.size() + record_bytes <= kWriteBufferBytes &&
      index_buffer_.size() + kIndexEntrySize <= kIndexBufferBytes) [[likely]] {
    record_crc = BufferRecord(deliver_at_ms, payload);
  } else {
    Result<uint32_t> crc = AppendRecordAfterFlush(deliver_at_ms, payload);
    if (!crc.ok()) return crc.status();
    record_crc = *crc;
  }
  data_bytes_ += record_bytes;
  const IndexEntry entry{deliver_at_ms, log_offset, static_cast<uint32_t>(payload.size()),
                         record_crc, pre_index};
  EncodeIndexEntry(entry, index_buffer_.Append(kIndexEntrySize));
  const uint32_t ordinal = LinkEntry(&cell, entries_);
  entries_ += 1;
  dirty_ = true;
  return ordinal;
}

uint32_t HourAppender::BufferRecord(int64_t deliver_at_ms, std::string_view payload) {
  char* record = data_buffer_.Append(kRecordHeaderSize + payload.size());
  const RecordHeader header = RecordHeaderFor(deliver_at_ms, payload);
  EncodeRecordHeader(header, record);
  std::copy(payload.begin(), payload.end(), record + kRecordHeaderSize);
  return header.crc;
}

Result<uint32_t> HourAppender::AppendRecordAfterFlush(int64_t deliver_at_ms,
                                                      std::string_view payload) {
  // Room first: a buffer that cannot be written refuses the record before it is half added.
  if (Status s = Flush(); !s.ok()) return s;
  if (kRecordHeaderSize + payload.size() <= kWriteBufferBytes) {
    return BufferRecord(deliver_at_ms, payload);
  }
  // Large records bypass the buffer so it never grows past its bound.
  const RecordHeader header = RecordHeaderFor(deliver_at_ms, payload);
  char header_bytes[kRecordHeaderSize];
  EncodeRecordHeader(header, header_bytes);
  Status s = data_.WriteAt2(data_written_, {header_bytes, kRecordHeaderSize}, payload);
  if (!s.ok()) return s;
  data_written_ += kRecordHeaderSize + payload.size();
  return header.crc;
}

Status HourAppender::Flush() {
  // Data before index, so that a crash of this process never leaves an entry in the page
  // cache whose record is missing. Positional writes make a retry after an error idempotent.
  if (!data_buffer_.empty()) {
    Status s = data_.WriteAt(data_written_, data_buffer_.view());
    if (!s.ok()) return s;
    data_written_ += data_buffer_.size();
    data_buffer_.Clear();
  }
  if (!index_buffer_.empty()) {
    Status s = index_.WriteAt(index_written_, index_buffer_.view());
    if (!s.ok()) return s;
    index_written_ += index_buffer_.size();
    index_buffer_.Clear();
  }
  return Status::Ok();
}

Status HourAppender::DescriptorsToSync(bool with_index, std::vector<PosixFile>* files) const {
  for (const PosixFile* file : {&data_, &index_}) {
    if (file == &index_ && !with_index) break;
    Result<PosixFile> descriptor =
        parked() ? PosixFile::Open(file == &data_ ? paths_.data : paths_.index,
                                   PosixFile::Mode::kReadWrite)
                 : file->Duplicate();
    if (!descriptor.ok()) return descriptor.status();
    files->push_back(std::move(*descriptor));
  }
  return Status::Ok();
}

Status HourAppender::StartSync(std::vector<PosixFile>* files) {
  const bool heads_due = entries_ - heads_covered_ >= kHeadsSaveEveryEntries;
  const bool with_index = heads_due || parked();
  Status s = Flush();
  if (s.ok()) s = DescriptorsToSync(with_index, files);
  if (!s.ok()) return s;
  dirty_ = false;
  sync_in_flight_ = true;
  index_syncing_entries_ = with_index ? entries_ : index_synced_entries_;
  if (heads_due) {
    pending_heads_ = std::make_unique<HeadsSlot>();
    pending_heads_->generation = heads_generation_ + 1;
    pending_heads_->covered = entries_;
    pending_heads_->cells = *cells_;
  }
  return Status::Ok();
}

Status HourAppender::FinishSync() {
  sync_in_flight_ = false;
  index_synced_entries_ = index_syncing_entries_;
  if (pending_heads_ == nullptr) return Status::Ok();
  std::unique_ptr<HeadsSlot> slot = std::move(pending_heads_);
  return SaveHeads(*slot);
}

void HourAppender::AbortSync() {
  dirty_ = true;
  sync_in_flight_ = false;
  pending_heads_.reset();
}

Status HourAppender::Park() {
  Status s = Flush();
  if (!s.ok()) return s;
  data_ = PosixFile();
  index_ = PosixFile();
  data_buffer_.Release();
  index_buffer_.Release();
  return Status::Ok();
}

Status HourAppender::Unpark() {
  Result<PosixFile> data = PosixFile::Open(paths_.data, PosixFile::Mode::kReadWrite);
  if (!data.ok()) return data.status();
  Result<PosixFile> index = PosixFile::Open(paths_.index, PosixFile::Mode::kReadWrite);
  if (!index.ok()) return index.status();
  data_ = std::move(*data);
  index_ = std::move(*index);
  return Status::Ok();
}

Status HourAppender::SaveHeadsIfDue(bool force) {
  uint64_t uncovered = entries_ - heads_covered_;
  if (uncovered == 0 || (!force && uncovered < kHeadsSaveEveryEntries)) return Status::Ok();
  HeadsSlot slot;
  slot.generation = heads_generation_ + 1;
  slot.covered = entries_;
  slot.cells = *cells_;
  return SaveHeads(slot);
}

Status HourAppender::SaveHeads(const HeadsSlot& slot) {
  Status s = storage::SaveHeads(paths_.heads, epoch_hour_, slot);
  if (!s.ok()) return s;
  heads_generation_ = slot.generation;
  heads_covered_ = slot.covered;
  return Status::Ok();
}

Status HourAppender::Close() {
  Status s = Flush();
  if (!s.ok()) return s;
  if (dirty_ || sync_in_flight_ || !index_synced()) {
    // A clean hour needs only its index synced; syncing its data again costs nothing.
    std::vector<PosixFile> files;
    s = DescriptorsToSync(/*with_index=*/true, &files);
    for (const PosixFile& file : files) {
      if (s.ok()) s = file.DataSync();
    }
    if (!s.ok()) return s;
  }
  dirty_ = false;
  sync_in_flight_ = false;
  index_synced_entries_ = entries_;
  pending_heads_.reset();  // the table saved now covers more
  return SaveHeadsIfDue(/*force=*/true);
}

}  // namespace delaybridge::storage
