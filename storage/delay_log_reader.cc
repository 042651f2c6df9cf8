#include "storage/delay_log_reader.h"

#include <algorithm>
#include <set>

#include "storage/block_cursor.h"
#include "storage/delivery_checkpoint.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "storage/posix_file.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kIndexReadBytes = 256 * 1024;
constexpr size_t kDataReadBytes = 1024 * 1024;

// The two files of an hour, opened read-only with their headers checked.
struct HourFiles {
  PosixFile data;
  PosixFile index;
  uint64_t data_bytes = 0;
  uint64_t index_bytes = 0;
};

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

// *bad_file, when given, is set to the path whose header failed.
Result<HourFiles> OpenHourFiles(const std::string& dir, int64_t epoch_hour,
                                std::string* bad_file = nullptr) {
  HourPaths paths = PathsOfHour(dir, epoch_hour);
  HourFiles files;
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

// Calls visit for entries [0, whole_entries) of index in order.
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

// Collects problems of one hour for VerifyHour, naming files and offsets.
class HourVerifier {
 public:
  HourVerifier(const std::string& dir, int64_t epoch_hour, HourFiles* files, VerifyReport* report)
      : dir_(dir), epoch_hour_(epoch_hour), files_(files), report_(report) {}

  Status Run() {
    Status s = LoadSavedTables();
    if (!s.ok()) return s;
    BlockCursor data_cursor(&files_->data, BlockCursor::Direction::kForward, kDataReadBytes);
    uint64_t whole = WholeEntries(files_->index_bytes);
    CompareSavedTables(0);
    s = ScanEntries(files_->index, whole, [&](const IndexEntryView& view) {
      CheckEntry(view, &data_cursor);
      CompareSavedTables(view.position + 1ull);
      return true;
    });
    if (!s.ok()) return s;
    CheckTails(whole);
    for (const HeadsSlot& slot : saved_) {
      if (slot.covered > whole) {
        Add(PathsOfHour(dir_, epoch_hour_).heads, HeadsSlotOffset(slot.generation),
            "head table covers " + std::to_string(slot.covered) + " entries, index has " +
                std::to_string(whole),
            false);
      }
    }
    return Status::Ok();
  }

 private:
  void Add(const std::string& file, uint64_t offset, std::string what, bool at_tail) {
    report_->problems.push_back({file, offset, std::move(what), at_tail});
  }

  void AddEntryProblem(const IndexEntryView& view, const std::string& what) {
    Add(files_->index.path(), view.index_offset,
        "entry " + std::to_string(view.position) + " " + what, false);
  }

  Status LoadSavedTables() {
    // Both slots are checked: a slot that passes its CRC must agree with the index.
    std::string path = PathsOfHour(dir_, epoch_hour_).heads;
    Result<bool> exists = FileExists(path);
    if (!exists.ok()) return exists.status();
    if (!*exists) return Status::Ok();
    Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kReadOnly);
    if (!file.ok()) return file.status();
    std::string bytes;
    if (Status s = file->ReadAt(0, kHeadsFileSize, &bytes); !s.ok()) return s;
    if (Status s = CheckFileHeader(bytes, kHeadsMagic, epoch_hour_, path); !s.ok()) {
      if (s.code() == Status::Code::kFailedPrecondition) return s;
      Add(path, 0, s.message(), false);
      return Status::Ok();
    }
    for (uint64_t slot_index = 0; slot_index < 2; ++slot_index) {
      uint64_t offset = kFileHeaderSize + slot_index * kHeadsSlotSize;
      HeadsSlot slot;
      if (bytes.size() >= offset + kHeadsSlotSize &&
          DecodeHeadsSlot(std::string_view(bytes).substr(offset, kHeadsSlotSize), &slot) &&
          HeadsSlotOffset(slot.generation) == offset) {
        saved_.push_back(slot);
      }
    }
    if (saved_.empty()) Add(path, kFileHeaderSize, "no valid head table slot", false);
    return Status::Ok();
  }

  // When the scan has seen exactly `covered` entries of a saved table, the two must agree.
  void CompareSavedTables(uint64_t seen) {
    for (const HeadsSlot& slot : saved_) {
      if (slot.covered != seen) continue;
      for (size_t s = 0; s < cells_.size(); ++s) {
        if (slot.cells[s].head == cells_[s].head && slot.cells[s].count == cells_[s].count) {
          continue;
        }
        Add(PathsOfHour(dir_, epoch_hour_).heads,
            HeadsSlotOffset(slot.generation) + kHeadsSlotHeaderSize + 8 * s,
            "second " + std::to_string(s) + " of the head table (generation " +
                std::to_string(slot.generation) + ") says head " +
                std::to_string(slot.cells[s].head) + " count " +
                std::to_string(slot.cells[s].count) + ", the index says head " +
                std::to_string(cells_[s].head) + " count " + std::to_string(cells_[s].count),
            false);
      }
    }
  }

  void CheckEntry(const IndexEntryView& view, BlockCursor* data_cursor) {
    report_->entries += 1;
    if (!view.checksum_ok) {
      AddEntryProblem(view, "fails its checksum");
      expected_offset_.reset();
      return;
    }
    const IndexEntry& entry = view.entry;
    if (HourOfMs(entry.deliver_at_ms) != epoch_hour_) {
      AddEntryProblem(view,
                      "is due at " + std::to_string(entry.deliver_at_ms) + ", outside this hour");
      expected_offset_.reset();
      return;
    }
    CheckLink(view);
    LinkEntry(&CellOf(cells_, entry.deliver_at_ms), view.position);
    if (expected_offset_ && entry.log_offset != *expected_offset_) {
      AddEntryProblem(view, "points to data offset " + std::to_string(entry.log_offset) +
                                ", expected " + std::to_string(*expected_offset_) +
                                " (records must be back to back)");
    }
    uint64_t end = entry.log_offset + kRecordHeaderSize + entry.size;
    expected_offset_ = end;
    last_record_end_ = std::max(last_record_end_, end);
    if (end > files_->data_bytes) {
      AddEntryProblem(view, "points past the end of " + files_->data.path() + " (record ends at " +
                                std::to_string(end) + ", file has " +
                                std::to_string(files_->data_bytes) + " bytes)");
      return;
    }
    std::string payload;
    Status s = ReadRecord(data_cursor, files_->data.path(), entry, &payload);
    if (s.ok()) {
      report_->records_ok += 1;
    } else {
      Add(files_->data.path(), entry.log_offset, s.message(), false);
    }
  }

  // pre_index must name the previous entry of the same second, which is what makes every
  // chain acyclic, confined to its second, and complete from its head.
  void CheckLink(const IndexEntryView& view) {
    const IndexEntry& entry = view.entry;
    int64_t second = SecondOfMs(entry.deliver_at_ms);
    uint32_t expected = CellOf(cells_, entry.deliver_at_ms).head;
    if (entry.pre_index == expected) return;
    if (entry.pre_index != kNoEntry && entry.pre_index >= view.position) {
      AddEntryProblem(view,
                      "links forwards to entry " + std::to_string(entry.pre_index) + " (a cycle)");
      return;
    }
    std::string found = "entry " + std::to_string(entry.pre_index);
    if (entry.pre_index == kNoEntry) found = "no entry";
    std::string other_second;
    if (entry.pre_index != kNoEntry) {
      std::string bytes;
      IndexEntry target;
      if (files_->index.ReadAt(IndexEntryOffset(entry.pre_index), kIndexEntrySize, &bytes).ok() &&
          bytes.size() == kIndexEntrySize && DecodeIndexEntry(bytes.data(), &target) &&
          SecondOfMs(target.deliver_at_ms) != second) {
        other_second =
            " of another second (" + std::to_string(SecondOfMs(target.deliver_at_ms)) + ")";
      }
    }
    std::string previous = expected == kNoEntry ? "none" : "entry " + std::to_string(expected);
    AddEntryProblem(view, "links to " + found + other_second +
                              ", but the previous entry of second " + std::to_string(second) +
                              " is " + previous +
                              (expected == kNoEntry ? "" : ", which becomes unreachable"));
  }

  void CheckTails(uint64_t whole) {
    uint64_t index_end = IndexEntryOffset(whole);
    if (files_->index_bytes > index_end) {
      Add(files_->index.path(), index_end,
          std::to_string(files_->index_bytes - index_end) +
              " bytes of a partial entry at the end (a write in progress, or a torn tail)",
          true);
    }
    uint64_t data_end = std::max<uint64_t>(last_record_end_, kFileHeaderSize);
    if (files_->data_bytes > data_end) {
      Add(files_->data.path(), data_end,
          std::to_string(files_->data_bytes - data_end) +
              " bytes after the last indexed record (a write in progress, a torn tail, or "
              "records whose entries a crash lost: opening the store indexes them again)",
          true);
    }
  }

  const std::string& dir_;
  int64_t epoch_hour_;
  HourFiles* files_;
  VerifyReport* report_;
  HeadCells cells_;
  std::vector<HeadsSlot> saved_;
  std::optional<uint64_t> expected_offset_ = kFileHeaderSize;
  uint64_t last_record_end_ = 0;
};

}  // namespace

Result<std::unique_ptr<DelayLogReader>> DelayLogReader::Open(const std::string& dir) {
  Result<bool> exists = FileExists(dir);
  if (!exists.ok()) return exists.status();
  if (!*exists) return Status::NotFound(dir + ": no such directory");
  std::unique_ptr<DelayLogReader> reader(new DelayLogReader(dir));
  Status s = reader->Refresh();
  if (!s.ok()) return s;
  return reader;
}

Status DelayLogReader::Refresh() {
  Result<std::map<int64_t, HourFilesPresent>> found = ScanHourFiles(dir_);
  if (!found.ok()) {
    return Status::InvalidArgument(found.status().message() + " (is it a directory?)");
  }
  hours_.clear();
  for (const auto& [hour, files] : *found) {
    if (files.data) hours_.push_back(hour);
  }
  Result<bool> checkpoint = FileExists(dir_ + "/" + kCheckpointFileName);
  if (!checkpoint.ok()) return checkpoint.status();
  has_checkpoint_ = *checkpoint;
  scanned_.clear();
  return Status::Ok();
}

Result<HourSummary> DelayLogReader::SummarizeHour(int64_t epoch_hour) {
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  HourSummary summary;
  summary.epoch_hour = epoch_hour;
  summary.name = HourName(epoch_hour);
  summary.data_file = files->data.path();
  summary.index_file = files->index.path();
  summary.data_bytes = files->data_bytes;
  summary.index_bytes = files->index_bytes;
  uint64_t whole = WholeEntries(files->index_bytes);
  summary.index_tail_bytes = files->index_bytes - IndexEntryOffset(whole);
  uint64_t last_end = kFileHeaderSize;
  Status s = ScanEntries(files->index, whole, [&](const IndexEntryView& view) {
    if (!view.checksum_ok) {
      summary.bad_entries += 1;
      return true;
    }
    const IndexEntry& e = view.entry;
    if (summary.records == 0 || e.deliver_at_ms < summary.min_deliver_at_ms) {
      summary.min_deliver_at_ms = e.deliver_at_ms;
    }
    if (summary.records == 0 || e.deliver_at_ms > summary.max_deliver_at_ms) {
      summary.max_deliver_at_ms = e.deliver_at_ms;
    }
    summary.records += 1;
    summary.payload_bytes += e.size;
    last_end = std::max(last_end, e.log_offset + kRecordHeaderSize + e.size);
    return true;
  });
  if (!s.ok()) return s;
  summary.unindexed_data_bytes = files->data_bytes > last_end ? files->data_bytes - last_end : 0;
  return summary;
}

Status DelayLogReader::ForEachIndexEntry(int64_t epoch_hour,
                                         const std::function<bool(const IndexEntryView&)>& visit) {
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  return ScanEntries(files->index, WholeEntries(files->index_bytes), visit);
}

Status DelayLogReader::ForEachRecord(int64_t epoch_hour,
                                     const std::function<bool(const HourRecordView&)>& visit) {
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  BlockCursor data_cursor(&files->data, BlockCursor::Direction::kForward, kDataReadBytes);
  // Ordinals counted as Scan() links entries, so they match ReadSecond's.
  std::array<uint32_t, kSecondsPerHour> seen{};
  HourRecordView record;
  return ScanEntries(
      files->index, WholeEntries(files->index_bytes), [&](const IndexEntryView& view) {
        if (!view.checksum_ok || HourOfMs(view.entry.deliver_at_ms) != epoch_hour) return true;
        record.index = view;
        record.ordinal = seen[SecondInHour(SecondOfMs(view.entry.deliver_at_ms))]++;
        record.status = ReadRecord(&data_cursor, files->data.path(), view.entry, &record.payload);
        if (!record.status.ok()) record.payload.clear();
        return visit(record);
      });
}

Result<RecordView> DelayLogReader::ReadRecordAt(int64_t epoch_hour, uint64_t log_offset) {
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  auto corrupt = [&](const std::string& why) {
    return Status::Corruption(files->data.path() + " at offset " + std::to_string(log_offset) +
                              ": " + why);
  };
  if (log_offset < kFileHeaderSize) return corrupt("offset is inside the file header");
  std::string header_bytes;
  Status s = files->data.ReadAt(log_offset, kRecordHeaderSize, &header_bytes);
  if (!s.ok()) return s;
  if (header_bytes.size() < kRecordHeaderSize) return corrupt("record header is cut off");
  RecordHeader header = DecodeRecordHeader(header_bytes.data());
  if (log_offset + kRecordHeaderSize + header.length > files->data_bytes) {
    return corrupt("record of " + std::to_string(header.length) +
                   " bytes runs past the end of the file");
  }
  RecordView record;
  record.log_offset = log_offset;
  record.length = header.length;
  record.deliver_at_ms = header.deliver_at_ms;
  s = files->data.ReadAt(log_offset + kRecordHeaderSize, header.length, &record.payload);
  if (!s.ok()) return s;
  if (record.payload.size() != header.length) return corrupt("record is cut off");
  if (RecordCrc(header.length, header.deliver_at_ms, record.payload) != header.crc) {
    return corrupt("record fails its checksum");
  }
  return record;
}

Result<const DelayLogReader::ScannedHour*> DelayLogReader::Scan(int64_t epoch_hour) {
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  auto& cached = scanned_[epoch_hour];
  if (cached != nullptr && cached->index_bytes == files->index_bytes) return cached.get();
  auto scanned = std::make_unique<ScannedHour>();
  scanned->index_bytes = files->index_bytes;
  scanned->whole_entries = WholeEntries(files->index_bytes);
  Status s = ScanEntries(files->index, scanned->whole_entries, [&](const IndexEntryView& view) {
    if (view.checksum_ok && HourOfMs(view.entry.deliver_at_ms) == epoch_hour) {
      LinkEntry(&CellOf(scanned->cells, view.entry.deliver_at_ms), view.position);
    }
    return true;
  });
  if (!s.ok()) return s;
  cached = std::move(scanned);
  return cached.get();
}

Result<std::array<uint32_t, kSecondsPerHour>> DelayLogReader::SecondCounts(int64_t epoch_hour) {
  Result<const ScannedHour*> scanned = Scan(epoch_hour);
  if (!scanned.ok()) return scanned.status();
  std::array<uint32_t, kSecondsPerHour> counts{};
  for (size_t s = 0; s < counts.size(); ++s) counts[s] = (*scanned)->cells[s].count;
  return counts;
}

Status DelayLogReader::ReadSecond(int64_t epoch_second, std::vector<ChainRecordView>* out) {
  int64_t hour = HourOfSecond(epoch_second);
  if (!std::binary_search(hours_.begin(), hours_.end(), hour)) return Status::Ok();
  Result<const ScannedHour*> scanned = Scan(hour);
  if (!scanned.ok()) return scanned.status();
  const HeadCell& cell = (*scanned)->cells[SecondInHour(epoch_second)];
  if (cell.count == 0) return Status::Ok();
  Result<HourFiles> files = OpenHourFiles(dir_, hour);
  if (!files.ok()) return files.status();
  std::vector<ChainEntry> chain;
  Status chain_status =
      WalkChain(files->index, epoch_second, cell, (*scanned)->whole_entries, &chain);
  BlockCursor cursor(&files->data, BlockCursor::Direction::kForward, kDataReadBytes);
  for (const ChainEntry& link : chain) {
    ChainRecordView view;
    view.position = link.position;
    view.ordinal = link.ordinal;
    view.entry = link.entry;
    view.status = ReadRecord(&cursor, files->data.path(), link.entry, &view.payload);
    if (!view.status.ok()) view.payload.clear();
    out->push_back(std::move(view));
  }
  return chain_status;
}

Status DelayLogReader::VerifyHour(int64_t epoch_hour, VerifyReport* report) {
  report->hours += 1;
  HourPaths paths = PathsOfHour(dir_, epoch_hour);
  Result<bool> index_exists = FileExists(paths.index);
  if (!index_exists.ok()) return index_exists.status();
  if (!*index_exists) {
    report->problems.push_back({paths.data, 0, "has no index file", false});
    return Status::Ok();
  }
  std::string bad_file;
  Result<HourFiles> files = OpenHourFiles(dir_, epoch_hour, &bad_file);
  if (!files.ok()) {
    // A damaged header is a finding; a newer version or an I/O error stops the check.
    if (files.status().code() != Status::Code::kCorruption) return files.status();
    report->problems.push_back({bad_file, 0, files.status().message(), false});
    return Status::Ok();
  }
  HourVerifier verifier(dir_, epoch_hour, &*files, report);
  return verifier.Run();
}

Result<VerifyReport> DelayLogReader::Verify() {
  VerifyReport report;
  for (int64_t hour : hours_) {
    Status s = VerifyHour(hour, &report);
    if (!s.ok()) return s;
  }
  // Index or heads files whose data file is missing are leftovers the store would delete.
  Result<std::map<int64_t, HourFilesPresent>> found = ScanHourFiles(dir_);
  if (!found.ok()) return found.status();
  for (const auto& [hour, files] : *found) {
    if (files.data) continue;
    const HourPaths paths = PathsOfHour(dir_, hour);
    if (files.index) report.problems.push_back({paths.index, 0, "has no data file", false});
    if (files.heads) report.problems.push_back({paths.heads, 0, "has no data file", false});
  }
  Result<std::optional<DeliveryCheckpoint>> checkpoint = ReadDeliveryCheckpoint(dir_);
  if (checkpoint.ok()) {
    report.checkpoint_present = checkpoint->has_value();
  } else if (checkpoint.status().code() == Status::Code::kCorruption) {
    report.checkpoint_present = true;
    report.problems.push_back(
        {dir_ + "/" + kCheckpointFileName, 0, checkpoint.status().message(), false});
  } else {
    return checkpoint.status();
  }
  return report;
}

}  // namespace delaybridge::storage
