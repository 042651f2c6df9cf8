#include "storage/delay_log_reader.h"

#include <algorithm>

#include "storage/block_cursor.h"
#include "storage/delivery_checkpoint.h"
#include "storage/heads_file.h"
#include "storage/hour_files.h"
#include "storage/posix_file.h"
#include "storage/second_chain.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kDataReadBytes = 1024 * 1024;

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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour);
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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour);
  if (!files.ok()) return files.status();
  return ScanEntries(files->index, WholeEntries(files->index_bytes), visit);
}

Status DelayLogReader::ForEachRecord(int64_t epoch_hour,
                                     const std::function<bool(const HourRecordView&)>& visit) {
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour);
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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour);
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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour);
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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, hour);
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
  Result<ReadOnlyHour> files = OpenReadOnlyHour(dir_, epoch_hour, &bad_file);
  if (!files.ok()) {
    // A damaged header is a finding; a newer version or an I/O error stops the check.
    if (files.status().code() != Status::Code::kCorruption) return files.status();
    report->problems.push_back({bad_file, 0, files.status().message(), false});
    return Status::Ok();
  }
  return VerifyHourFiles(dir_, epoch_hour, &*files, report);
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
