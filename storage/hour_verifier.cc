#include "storage/hour_verifier.h"

#include <algorithm>
#include <optional>

#include "storage/block_cursor.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kDataReadBytes = 1024 * 1024;

// Collects problems of one hour for VerifyHour, naming files and offsets.
class HourVerifier {
 public:
  HourVerifier(const std::string& dir, int64_t epoch_hour, ReadOnlyHour* files,
               VerifyReport* report)
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
  ReadOnlyHour* files_;
  VerifyReport* report_;
  HeadCells cells_;
  std::vector<HeadsSlot> saved_;
  std::optional<uint64_t> expected_offset_ = kFileHeaderSize;
  uint64_t last_record_end_ = 0;
};

}  // namespace

Status VerifyHourFiles(const std::string& dir, int64_t epoch_hour, ReadOnlyHour* files,
                       VerifyReport* report) {
  HourVerifier verifier(dir, epoch_hour, files, report);
  return verifier.Run();
}

}  // namespace delaybridge::storage
