#include "storage/hour_recovery.h"

#include "storage/block_cursor.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "storage/posix_file.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kIndexReadBytes = 64 * 1024;
constexpr size_t kDataReadBytes = 1024 * 1024;

void AddProblem(RecoveryReport* report, const std::string& file, uint64_t offset,
                std::string what) {
  report->problems.push_back({file, offset, std::move(what)});
}

// Opens a file that must start with a header; rewrites the header when the file is shorter
// than one (torn while being created). *had_header says whether a header was found.
Result<PosixFile> OpenWithHeader(const std::string& path, uint32_t magic, int64_t epoch_hour,
                                 RecoveryReport* report, bool* had_header) {
  Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kCreateReadWrite);
  if (!file.ok()) return file.status();
  std::string header;
  Status s = file->ReadAt(0, kFileHeaderSize, &header);
  if (!s.ok()) return s;
  *had_header = header.size() == kFileHeaderSize;
  if (*had_header) {
    s = CheckFileHeader(header, magic, epoch_hour, path);
    if (!s.ok()) return s;
    return file;
  }
  if (!header.empty()) {
    AddProblem(report, path, 0,
               "torn file header (" + std::to_string(header.size()) + " bytes) rewritten");
    report->truncated_bytes += header.size();
  }
  s = file->Truncate(0);
  if (s.ok()) s = file->WriteAt(0, EncodeFileHeader(magic, epoch_hour));
  if (!s.ok()) return s;
  return file;
}

// The walk over the uncovered index tail: everything RecoverHour learns on the way.
struct TailWalk {
  HeadCells cells;
  uint64_t kept_entries = 0;            // entries that survive
  uint64_t data_end = kFileHeaderSize;  // end of the last kept record
};

// Decides whether entry (at position) may join the hour; on "no", reports why and returns
// false, which drops it and every later entry.
bool AcceptEntry(const std::string& index_path, const std::string& data_path, uint64_t data_size,
                 int64_t epoch_hour, uint64_t position, const IndexEntry& entry,
                 const TailWalk& walk, RecoveryReport* report) {
  uint64_t offset = IndexEntryOffset(position);
  auto reject = [&](const std::string& why) {
    AddProblem(report, index_path, offset, "entry " + std::to_string(position) + " " + why);
    return false;
  };
  if (HourOfMs(entry.deliver_at_ms) != epoch_hour) return reject("is due outside this hour");
  if (entry.log_offset != walk.data_end) {
    return reject("points to data offset " + std::to_string(entry.log_offset) + ", expected " +
                  std::to_string(walk.data_end));
  }
  if (entry.pre_index != CellOf(walk.cells, entry.deliver_at_ms).head)
    return reject("does not link to its second's chain");
  if (entry.log_offset + kRecordHeaderSize + entry.size > data_size) {
    return reject("points past the end of " + data_path + " (torn tail)");
  }
  return true;
}

// Walks index entries [from, whole_entries), verifying each against the data file.
Status WalkTail(const PosixFile& index, const PosixFile& data, uint64_t data_size,
                int64_t epoch_hour, uint64_t from, uint64_t whole_entries, TailWalk* walk,
                RecoveryReport* report) {
  BlockCursor index_cursor(&index, BlockCursor::Direction::kForward, kIndexReadBytes);
  BlockCursor data_cursor(&data, BlockCursor::Direction::kForward, kDataReadBytes);
  for (uint64_t position = from; position < whole_entries; ++position) {
    std::string_view bytes;
    Status s = index_cursor.Read(IndexEntryOffset(position), kIndexEntrySize, &bytes);
    if (!s.ok()) return s;
    IndexEntry entry;
    if (bytes.size() < kIndexEntrySize || !DecodeIndexEntry(bytes.data(), &entry)) {
      AddProblem(report, index.path(), IndexEntryOffset(position),
                 "entry " + std::to_string(position) + " fails its checksum");
      break;
    }
    if (!AcceptEntry(index.path(), data.path(), data_size, epoch_hour, position, entry, *walk,
                     report)) {
      break;
    }
    std::string payload;
    s = ReadRecord(&data_cursor, data.path(), entry, &payload);
    if (s.code() == Status::Code::kIOError) return s;
    if (!s.ok()) {
      // The bytes are there but wrong: keep the entry so the chain and the ordinals stay
      // intact; every read of this second reports the record.
      AddProblem(report, data.path(), entry.log_offset, s.message());
      report->corrupt_records += 1;
    }
    LinkEntry(&CellOf(walk->cells, entry.deliver_at_ms), position);
    walk->kept_entries = position + 1;
    walk->data_end = entry.log_offset + kRecordHeaderSize + entry.size;
  }
  return Status::Ok();
}

// The records after the last kept entry that no entry describes: a sync makes the data file
// durable and leaves the index to the page cache (docs/storage-format.md "Writing and the sync
// order"), so after a crash the index may end before the data. Each whole record with a good
// checksum, due in this hour, gets its entry back, linked as Append linked it; the first one
// that is not (a torn tail, or damage) ends the hour's data there. Returns the entries'
// bytes, to be written after the kept ones.
Status ReindexDataTail(const PosixFile& data, uint64_t data_size, int64_t epoch_hour,
                       TailWalk* walk, std::string* entries, RecoveryReport* report) {
  BlockCursor cursor(&data, BlockCursor::Direction::kForward, kDataReadBytes);
  uint64_t reindexed = 0;
  while (walk->data_end + kRecordHeaderSize <= data_size) {
    std::string_view bytes;
    Status s = cursor.Read(walk->data_end, kRecordHeaderSize, &bytes);
    if (!s.ok()) return s;
    if (bytes.size() < kRecordHeaderSize) break;
    const RecordHeader header = DecodeRecordHeader(bytes.data());
    if (HourOfMs(header.deliver_at_ms) != epoch_hour ||
        header.length > data_size - walk->data_end - kRecordHeaderSize) {
      break;
    }
    const IndexEntry entry{header.deliver_at_ms, walk->data_end, header.length, header.crc,
                           CellOf(walk->cells, header.deliver_at_ms).head};
    std::string payload;
    s = ReadRecord(&cursor, data.path(), entry, &payload);
    if (s.code() == Status::Code::kIOError) return s;
    if (!s.ok()) break;
    char entry_bytes[kIndexEntrySize];
    EncodeIndexEntry(entry, entry_bytes);
    entries->append(entry_bytes, kIndexEntrySize);
    LinkEntry(&CellOf(walk->cells, entry.deliver_at_ms), walk->kept_entries);
    walk->kept_entries += 1;
    walk->data_end += kRecordHeaderSize + header.length;
    reindexed += 1;
  }
  if (reindexed > 0) {
    AddProblem(report, data.path(), IndexEntryOffset(walk->kept_entries - reindexed),
               std::to_string(reindexed) +
                   " records after the last index entry indexed again from the data file");
    report->records_reindexed += reindexed;
  }
  return Status::Ok();
}

// Where the walk starts: the saved head table, when it is usable.
Status StartFromHeads(const HourPaths& paths, int64_t epoch_hour, const PosixFile& index,
                      uint64_t whole_entries, uint64_t data_size, TailWalk* walk,
                      uint64_t* heads_generation, RecoveryReport* report) {
  Result<std::optional<HeadsSlot>> slot = LoadHeads(paths.heads, epoch_hour);
  if (!slot.ok()) return slot.status();
  if (!slot->has_value()) return Status::Ok();
  *heads_generation = (*slot)->generation;
  uint64_t covered = (*slot)->covered;
  if (covered == 0) return Status::Ok();
  std::string bytes;
  IndexEntry last;
  Status s = index.ReadAt(IndexEntryOffset(covered - 1), kIndexEntrySize, &bytes);
  if (!s.ok()) return s;
  uint64_t end = 0;
  bool usable = covered <= whole_entries && bytes.size() == kIndexEntrySize &&
                DecodeIndexEntry(bytes.data(), &last) &&
                (end = last.log_offset + kRecordHeaderSize + last.size) <= data_size;
  if (!usable) {
    AddProblem(report, paths.heads, HeadsSlotOffset(*heads_generation),
               "head table covers " + std::to_string(covered) +
                   " entries that the index or data no longer hold; rebuilt from the index");
    return Status::Ok();
  }
  walk->cells = (*slot)->cells;
  walk->kept_entries = covered;
  walk->data_end = end;
  return Status::Ok();
}

// Cuts file back to keep bytes, reporting what was cut.
Status CutTail(PosixFile* file, uint64_t size, uint64_t keep, const std::string& what,
               RecoveryReport* report) {
  if (size <= keep) return Status::Ok();
  AddProblem(report, file->path(), keep,
             std::to_string(size - keep) + " bytes " + what + " cut off");
  report->truncated_bytes += size - keep;
  Status s = file->Truncate(keep);
  if (s.ok()) s = file->DataSync();
  return s;
}

}  // namespace

Result<std::optional<HourState>> RecoverHour(const std::string& dir, int64_t epoch_hour,
                                             RecoveryReport* report) {
  HourPaths paths = PathsOfHour(dir, epoch_hour);
  Result<bool> data_exists = FileExists(paths.data);
  if (!data_exists.ok()) return data_exists.status();
  if (!*data_exists) {
    // The data file is created first and deleted last, so an index without it is a leftover.
    Result<bool> index_exists = FileExists(paths.index);
    if (index_exists.ok() && *index_exists) {
      AddProblem(report, paths.index, 0, "index without data file removed");
    }
    Status s = RemoveHourFiles(paths);
    if (!s.ok()) return s;
    return std::optional<HourState>();
  }
  bool data_had_header = false;
  bool index_had_header = false;
  Result<PosixFile> data =
      OpenWithHeader(paths.data, kDataMagic, epoch_hour, report, &data_had_header);
  if (!data.ok()) return data.status();
  Result<PosixFile> index =
      OpenWithHeader(paths.index, kIndexMagic, epoch_hour, report, &index_had_header);
  if (!index.ok()) return index.status();
  Result<uint64_t> data_size = data->Size();
  if (!data_size.ok()) return data_size.status();
  Result<uint64_t> index_size = index->Size();
  if (!index_size.ok()) return index_size.status();
  uint64_t whole_entries = (*index_size - kFileHeaderSize) / kIndexEntrySize;

  TailWalk walk;
  uint64_t heads_generation = 0;
  Status s = StartFromHeads(paths, epoch_hour, *index, whole_entries, *data_size, &walk,
                            &heads_generation, report);
  if (!s.ok()) return s;
  uint64_t covered_at_start = walk.kept_entries;
  s = WalkTail(*index, *data, *data_size, epoch_hour, walk.kept_entries, whole_entries, &walk,
               report);
  const uint64_t valid_entries = walk.kept_entries;
  std::string reindexed;
  if (s.ok()) s = ReindexDataTail(*data, *data_size, epoch_hour, &walk, &reindexed, report);
  if (s.ok()) {
    s = CutTail(&*index, *index_size, IndexEntryOffset(valid_entries),
                "of index after the last valid entry", report);
  }
  if (s.ok() && !reindexed.empty()) s = index->WriteAt(IndexEntryOffset(valid_entries), reindexed);
  // Entries that neither survived nor came back from the data: their records are gone.
  if (whole_entries > walk.kept_entries)
    report->records_dropped += whole_entries - walk.kept_entries;
  if (s.ok()) {
    s = CutTail(&*data, *data_size, walk.data_end, "of data after the last whole record", report);
  }
  if (!s.ok()) return s;

  if (walk.kept_entries == 0) {
    s = RemoveHourFiles(paths);
    if (!s.ok()) return s;
    return std::optional<HourState>();
  }
  if (walk.kept_entries != covered_at_start) {
    // The verified tail may still be only in the page cache (the process crashed, not the
    // machine): sync it before a saved table claims it.
    s = data->DataSync();
    if (s.ok()) s = index->DataSync();
    if (!s.ok()) return s;
    HeadsSlot slot{heads_generation + 1, walk.kept_entries, walk.cells};
    s = SaveHeads(paths.heads, epoch_hour, slot);
    if (!s.ok()) return s;
  }
  report->hours += 1;
  report->records += walk.kept_entries;
  return std::optional<HourState>(HourState{walk.kept_entries, walk.data_end});
}

}  // namespace delaybridge::storage
