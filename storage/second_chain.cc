#include "storage/second_chain.h"

#include <algorithm>

#include "storage/coding.h"

namespace delaybridge::storage {
namespace {

constexpr size_t kIndexWindowBytes = 64 * 1024;
constexpr size_t kDataWindowBytes = 256 * 1024;

Status BrokenLink(const PosixFile& index, uint64_t position, const std::string& why) {
  return Status::Corruption(index.path() + " at offset " +
                            std::to_string(IndexEntryOffset(position)) + ": entry " +
                            std::to_string(position) + " " + why);
}

// Assigns ordinals once the walk knows how far it got: the head is ordinal count - 1.
void FinishWalk(uint32_t count, std::vector<ChainEntry>* walked, std::vector<ChainEntry>* out) {
  std::reverse(walked->begin(), walked->end());
  uint32_t first = count - static_cast<uint32_t>(walked->size());
  for (size_t i = 0; i < walked->size(); ++i) {
    (*walked)[i].ordinal = first + static_cast<uint32_t>(i);
    out->push_back((*walked)[i]);
  }
}

// The problem a second reports: the first, except that an error that may pass (EIO, EMFILE, a
// full disk) outranks damage. The caller skips a damaged second but reads one with such an
// error again, and skipping would lose the records the error hid.
Status Verdict(Status kept, Status next) {
  if (kept.ok()) return next;
  const bool kept_is_damage = kept.code() == Status::Code::kCorruption;
  const bool next_is_damage = next.code() == Status::Code::kCorruption;
  return kept_is_damage && !next_is_damage ? next : kept;
}

}  // namespace

Status WalkChain(const PosixFile& index, int64_t epoch_second, const HeadCell& cell,
                 uint64_t entries_in_index, std::vector<ChainEntry>* out) {
  std::vector<ChainEntry> walked;
  // The count comes from the head table: no more than the index holds.
  walked.reserve(std::min<uint64_t>(cell.count, entries_in_index));
  BlockCursor cursor(&index, BlockCursor::Direction::kBackward, kIndexWindowBytes);
  Status problem;
  uint32_t position = cell.head;
  while (position != kNoEntry && problem.ok()) {
    if (position >= entries_in_index || walked.size() >= cell.count) {
      problem = BrokenLink(index, position, "is beyond the chain's end or count");
      break;
    }
    std::string_view bytes;
    problem = cursor.Read(IndexEntryOffset(position), kIndexEntrySize, &bytes);
    if (!problem.ok()) break;
    ChainEntry link;
    link.position = position;
    if (bytes.size() < kIndexEntrySize || !DecodeIndexEntry(bytes.data(), &link.entry)) {
      problem = BrokenLink(index, position, "fails its checksum");
    } else if (SecondOfMs(link.entry.deliver_at_ms) != epoch_second) {
      problem = BrokenLink(index, position, "belongs to another second");
    } else if (link.entry.pre_index != kNoEntry && link.entry.pre_index >= position) {
      problem = BrokenLink(index, position, "links forwards (would cycle)");
    } else {
      walked.push_back(link);
      position = link.entry.pre_index;
    }
  }
  if (problem.ok() && walked.size() != cell.count) {
    problem = Status::Corruption(
        index.path() + ": chain of second " + std::to_string(epoch_second) + " has " +
        std::to_string(walked.size()) + " entries, head table says " + std::to_string(cell.count));
  }
  FinishWalk(std::max<uint32_t>(cell.count, static_cast<uint32_t>(walked.size())), &walked, out);
  return problem;
}

Status ReadRecord(BlockCursor* data, const std::string& data_path, const IndexEntry& entry,
                  std::string* payload) {
  std::string_view bytes;
  Status s = data->Read(entry.log_offset, kRecordHeaderSize + size_t{entry.size}, &bytes);
  if (!s.ok()) return s;
  auto where = [&](const std::string& why) {
    return Status::Corruption(data_path + " at offset " + std::to_string(entry.log_offset) +
                              ": record " + why);
  };
  if (bytes.size() < kRecordHeaderSize + size_t{entry.size}) return where("is cut off");
  RecordHeader header = DecodeRecordHeader(bytes.data());
  std::string_view body = bytes.substr(kRecordHeaderSize, entry.size);
  if (header.length != entry.size) return where("length disagrees with its index entry");
  if (header.deliver_at_ms != entry.deliver_at_ms) {
    return where("delivery time disagrees with its index entry");
  }
  if (header.crc != entry.record_crc ||
      RecordCrc(header.length, header.deliver_at_ms, body) != header.crc) {
    return where("fails its checksum");
  }
  payload->assign(body);
  return Status::Ok();
}

Status ReadSecondChain(const PosixFile& index, const PosixFile& data, int64_t epoch_second,
                       const HeadCell& cell, uint64_t entries_in_index,
                       std::vector<StoredRecord>* out) {
  std::vector<ChainEntry> chain;
  Status first_problem = WalkChain(index, epoch_second, cell, entries_in_index, &chain);
  BlockCursor cursor(&data, BlockCursor::Direction::kForward, kDataWindowBytes);
  for (const ChainEntry& link : chain) {
    StoredRecord record;
    record.deliver_at_ms = link.entry.deliver_at_ms;
    record.ordinal = link.ordinal;
    Status s = ReadRecord(&cursor, data.path(), link.entry, &record.payload);
    if (s.ok()) {
      out->push_back(std::move(record));
    } else {
      first_problem = Verdict(std::move(first_problem), std::move(s));
    }
  }
  return first_problem;
}

}  // namespace delaybridge::storage
