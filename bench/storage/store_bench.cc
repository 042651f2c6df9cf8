// bench_storage: DelayLogStore append throughput with group commit every 5 ms, against raw
// sequential writes of the same payload bytes to one file with the same fdatasync cadence,
// against raw writes of the store's own layout (what the format costs before the code does) and
// against the least work a store of this design does per record (BM_ChainedLayout: checksums
// and chain links too); and walking one second of 100k records with a cold and a warm page cache.
//
// Run (Release build): build-rel/bin/bench_storage [--benchmark_filter=...]. Rates use wall
// time (UseRealTime): waiting for fdatasync is part of what is measured.
// The store directory is $DELAYBRIDGE_BENCH_DIR or a fresh directory under /tmp (on disk).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/storage/bench_dir.h"
#include "storage/append_buffer.h"
#include "storage/crc32c.h"
#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "storage/hour_files.h"
#include "storage/parallel_sync.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {
namespace {

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kHourMs = 3'600'000;
constexpr auto kSyncEvery = std::chrono::milliseconds(5);
constexpr size_t kRawBufferBytes = kWriteBufferBytes;  // as large as the store's data writes

// Calls sync every kSyncEvery of wall time; checked every 16 appends to keep clock reads cheap.
class SyncCadence {
 public:
  template <typename SyncFn>
  void Tick(uint64_t count, SyncFn&& sync) {
    if ((count & 15) != 0) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_sync_ < kSyncEvery) return;
    sync();
    last_sync_ = std::chrono::steady_clock::now();
  }

 private:
  std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

// The group commit as the bridge runs it: the fdatasyncs of one commit run on another thread
// while the appends go on; the next commit begins kSyncEvery after the last one began, or once
// that one is done if it took longer. Checked every 16 appends. begin() writes what is buffered
// and returns the syncs to run behind (a callable returning Status); finish(status) takes
// their result on the appending thread.
class SyncBehind {
 public:
  template <typename BeginFn, typename FinishFn>
  void Tick(uint64_t count, BeginFn&& begin, FinishFn&& finish) {
    if ((count & 15) != 0) return;
    if (in_flight_.valid()) {
      if (in_flight_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
      finish(in_flight_.get());
    }
    auto now = std::chrono::steady_clock::now();
    if (now - last_begin_ < kSyncEvery) return;
    last_begin_ = now;
    in_flight_ = std::async(std::launch::async, begin());
  }
  template <typename FinishFn>
  void Drain(FinishFn&& finish) {
    if (in_flight_.valid()) finish(in_flight_.get());
  }

 private:
  std::chrono::steady_clock::time_point last_begin_ = std::chrono::steady_clock::now();
  std::future<Status> in_flight_;
};

// Uniform random milliseconds inside an hour: splitmix64, mapped onto [0, kHourMs) by a multiply
// and a shift. Cheap on purpose: the raw writes the store is compared with draw no numbers, and
// mt19937_64 with a division took 2.5-4% of BM_StoreAppend's samples.
class RandomMsInHour {
 public:
  int64_t Next() {
    state_ += 0x9E3779B97F4A7C15;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
    z ^= z >> 31;
    return static_cast<int64_t>((static_cast<unsigned __int128>(z) * kHourMs) >> 64);
  }

 private:
  uint64_t state_ = 42;
};

void ReportRates(benchmark::State& state, size_t payload_bytes) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * payload_bytes));
}

// A store whose appends spread round robin over the given number of delivery hours (random ms
// inside each hour), as a delay topic with many delays would. Its hour files exist before timing
// starts: the benchmarks measure appending, not creating files (each Google Benchmark trial
// starts from a fresh directory, removed at the end).
class SpreadStore {
 public:
  SpreadStore(benchmark::State& state, size_t payload_bytes, int64_t hours, size_t max_open_hours)
      : state_(state), dir_(FreshDir("append")), payload_(payload_bytes, 'p'), hours_(hours) {
    StoreOptions options;
    options.dir = dir_;
    options.max_open_hours = max_open_hours;
    store_ = std::move(DelayLogStore::Open(options, nullptr)).value();
    for (int64_t h = 0; h < hours_; ++h) {
      if (!store_->Append(kBaseMs + h * kHourMs, payload_).ok()) state.SkipWithError("append");
    }
    Sync();
  }
  ~SpreadStore() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void AppendNext() {
    int64_t at = kBaseMs + next_hour_ * kHourMs + random_.Next();
    if (!store_->Append(at, payload_).ok()) state_.SkipWithError("append failed");
    next_hour_ = next_hour_ + 1 == hours_ ? 0 : next_hour_ + 1;  // no division per append
    ++count_;
  }
  uint64_t count() const { return count_; }
  void Sync() {
    if (!store_->Sync().ok()) state_.SkipWithError("sync failed");
  }
  DelayLogStore& store() { return *store_; }

 private:
  benchmark::State& state_;
  std::string dir_;
  std::unique_ptr<DelayLogStore> store_;
  std::string payload_;
  int64_t hours_;
  RandomMsInHour random_;
  int64_t next_hour_ = 0;
  uint64_t count_ = 0;
};

// Args: payload bytes, number of delivery hours, hour files held open.
void BM_StoreAppend(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  SpreadStore store(state, payload_bytes, state.range(1), static_cast<size_t>(state.range(2)));
  SyncCadence cadence;
  for (auto _ : state) {
    store.AppendNext();
    cadence.Tick(store.count(), [&] { store.Sync(); });
  }
  store.Sync();
  ReportRates(state, payload_bytes);
}
BENCHMARK(BM_StoreAppend)
    ->ArgNames({"payload", "hours", "max_open"})
    ->ArgsProduct({{100, 1024}, {1, 24, 720}, {64}})
    ->Args({100, 720, 1024})
    ->Args({1024, 720, 1024})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// BM_StoreAppend with the group commit run behind the appends (SyncBehind), as the bridge runs
// it: the appending thread's own work sets the rate, not the wait for fdatasync.
void BM_StoreAppendSyncBehind(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  SpreadStore store(state, payload_bytes, state.range(1), StoreOptions{}.max_open_hours);
  std::unique_ptr<PendingSync> pending;
  auto begin = [&] {
    pending = std::move(store.store().BeginSync()).value();
    return [sync = pending.get()] { return sync->Run(); };
  };
  auto finish = [&](const Status& run) {
    if (!store.store().FinishSync(std::move(pending), run).ok()) state.SkipWithError("sync");
  };
  SyncBehind commits;
  for (auto _ : state) {
    store.AppendNext();
    commits.Tick(store.count(), begin, finish);
  }
  commits.Drain(finish);
  ReportRates(state, payload_bytes);
}
BENCHMARK(BM_StoreAppendSyncBehind)
    ->ArgNames({"payload", "hours"})
    ->ArgsProduct({{100}, {1, 24}})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// The payload bytes alone, appended to one file through a kRawBufferBytes buffer, in a fresh
// directory removed at the end.
class RawFile {
 public:
  explicit RawFile(benchmark::State& state)
      : state_(state),
        dir_(FreshDir("raw")),
        file_(
            std::move(PosixFile::Open(dir_ + "/raw", PosixFile::Mode::kCreateReadWrite)).value()) {}
  ~RawFile() { std::filesystem::remove_all(dir_); }

  void Append(std::string_view bytes) {
    buffer_.append(bytes);
    if (buffer_.size() >= kRawBufferBytes) Flush();
  }
  void Flush() {
    if (!file_.WriteAt(written_, buffer_).ok()) state_.SkipWithError("write failed");
    written_ += buffer_.size();
    buffer_.clear();
  }
  const PosixFile& file() const { return file_; }

 private:
  benchmark::State& state_;
  std::string dir_;
  PosixFile file_;
  std::string buffer_;
  uint64_t written_ = 0;
};

// The baseline: the same payload bytes appended to one file through a buffer, fdatasync'ed on
// the same cadence.
void BM_RawSequentialWrite(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  RawFile raw(state);
  const std::string payload(payload_bytes, 'p');
  uint64_t count = 0;
  SyncCadence cadence;
  for (auto _ : state) {
    raw.Append(payload);
    cadence.Tick(++count, [&] {
      raw.Flush();
      if (!raw.file().DataSync().ok()) state.SkipWithError("fdatasync failed");
    });
  }
  raw.Flush();
  ReportRates(state, payload_bytes);
}
BENCHMARK(BM_RawSequentialWrite)
    ->ArgNames({"payload"})
    ->Args({100})
    ->Args({1024})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// One hour's pair of files as the store's layout writes them, through buffers of the store's
// sizes (AppendBuffer, as HourAppender's), with no other work (BM_RawStoreLayout), or with the
// work of ChainedHour.
class LayoutHour {
 public:
  // Room for a record and its index entry at the ends of the buffers.
  struct RecordRoom {
    char* record;
    char* entry;  // nullptr for an entry of 0 bytes
  };

  LayoutHour(benchmark::State& state, const std::string& dir, int64_t hour)
      : state_(state), data_(Open(dir, hour, "data")), index_(Open(dir, hour, "index")) {}

  void Append(std::string_view record, std::string_view entry) {
    RecordRoom room = Room(record.size(), entry.size());
    std::copy(record.begin(), record.end(), room.record);
    std::copy(entry.begin(), entry.end(), room.entry);
  }
  // Writes the buffers first when either lacks room. The record must fit an empty data buffer.
  RecordRoom Room(size_t record_bytes, size_t entry_bytes) {
    if (data_buffer_.size() + record_bytes > kWriteBufferBytes ||
        index_buffer_.size() + entry_bytes > kIndexBufferBytes) {
      Flush();
    }
    char* entry = entry_bytes == 0 ? nullptr : index_buffer_.Append(entry_bytes);
    return {data_buffer_.Append(record_bytes), entry};
  }
  void Flush() {
    Flush(data_, data_buffer_, data_written_);
    Flush(index_, index_buffer_, index_written_);
  }
  const PosixFile& data() const { return data_; }
  const PosixFile& index() const { return index_; }

 private:
  static PosixFile Open(const std::string& dir, int64_t hour, const char* name) {
    std::string path = dir + "/" + name + std::to_string(hour);
    return std::move(PosixFile::Open(path, PosixFile::Mode::kCreateReadWrite)).value();
  }
  void Flush(PosixFile& file, AppendBuffer& buffer, uint64_t& written) {
    if (buffer.empty()) return;
    if (!file.WriteAt(written, buffer.view()).ok()) state_.SkipWithError("write failed");
    written += buffer.size();
    buffer.Clear();
  }

  benchmark::State& state_;
  PosixFile data_;
  PosixFile index_;
  AppendBuffer data_buffer_{kWriteBufferBytes};
  AppendBuffer index_buffer_{kIndexBufferBytes};
  uint64_t data_written_ = 0;
  uint64_t index_written_ = 0;
};

// What the store's layout alone costs: the bytes the store writes for each record (its payload
// behind a record header in one file, an index entry in another) with no other work, the
// records round robin over the files of `hours` hours as BM_StoreAppend's, on the same cadence;
// sync_index: fdatasync the index files too, or only the data files, all of them concurrently
// as the store's group commit does (storage/parallel_sync.h). entry: bytes of index entry per
// record, to see what a smaller one would save: 32 is the format's (kIndexEntrySize), 16 an
// entry without the copies of the record's delivery time, length and checksum, 0 no index (its
// file is created and never written; a format without one would also need a chain link in the
// record's header). header: bytes of record header, 16 the format's (kRecordHeaderSize), 12 one
// holding the delivery time as milliseconds in the hour.
void BM_RawStoreLayout(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  const bool sync_index = state.range(1) == 1;
  const int64_t hours = state.range(2);
  const auto entry_bytes = static_cast<size_t>(state.range(3));
  const auto header_bytes = static_cast<size_t>(state.range(4));
  std::string dir = FreshDir("layout");
  std::vector<std::unique_ptr<LayoutHour>> files;
  std::vector<std::function<Status()>> syncs;
  for (int64_t h = 0; h < hours; ++h) {
    files.push_back(std::make_unique<LayoutHour>(state, dir, h));
    const LayoutHour& hour = *files.back();
    syncs.push_back([&hour] { return hour.data().DataSync(); });
    if (sync_index && entry_bytes > 0) {
      syncs.push_back([&hour] { return hour.index().DataSync(); });
    }
  }
  const std::string record(header_bytes + payload_bytes, 'p');
  const std::string entry(entry_bytes, 'e');
  uint64_t count = 0;
  size_t next_hour = 0;
  SyncCadence cadence;
  for (auto _ : state) {
    files[next_hour]->Append(record, entry);
    next_hour = next_hour + 1 == files.size() ? 0 : next_hour + 1;  // no division per record
    ++count;
    cadence.Tick(count, [&] {
      for (const auto& hour : files) hour->Flush();
      if (!RunConcurrently(syncs).ok()) state.SkipWithError("fdatasync failed");
    });
  }
  ReportRates(state, payload_bytes);
  files.clear();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_RawStoreLayout)
    ->ArgNames({"payload", "sync_index", "hours", "entry", "header"})
    ->ArgsProduct({{100, 1024}, {0, 1}, {1}, {kIndexEntrySize}, {kRecordHeaderSize}})
    ->Args({100, 0, 24, kIndexEntrySize, kRecordHeaderSize})
    ->ArgsProduct({{100}, {0}, {1, 24}, {16, 0}, {kRecordHeaderSize}})
    ->ArgsProduct({{100}, {0}, {1, 24}, {16}, {12}})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// The layouts BM_ChainedLayout writes: the format's; a smaller one (a 12-byte header {length,
// checksum, milliseconds in the hour} and a 16-byte entry {data file offset (42 bits) and
// milliseconds (22 bits), chain link, checksum}); and one file (a 16-byte header {length,
// checksum, milliseconds (22 bits) and the chain link (42 bits)}, the link the byte offset of the
// previous record of the same second, and an index file never written).
enum class FloorLayout : int64_t { kFormat = 0, kSmall = 1, kOneFile = 2 };

inline constexpr int kMsInHourBits = 22;  // 3,599,999 < 2^22
inline constexpr int kOffsetBits = 64 - kMsInHourBits;
inline constexpr uint64_t kOffsetMask = (uint64_t{1} << kOffsetBits) - 1;
inline constexpr uint64_t kNoPreviousRecord = kOffsetMask;  // one file's empty chain

// The head cell of a one-file layout: a byte offset needs more than 32 bits. Packed to 12 bytes,
// the least such a cell takes, so that the tables take no more cache than they must.
struct [[gnu::packed]] OffsetCell {
  uint64_t head = kNoPreviousRecord;
  uint32_t count = 0;
};
static_assert(sizeof(OffsetCell) == 12);

// One hour written with the least work a store of this design does per record
// (BM_ChainedLayout): the record's header with its checksum, its payload, its index entry with
// the entry's checksum (which covers the record's, so that the entry names its record), and its
// second's chain link in a head table, through buffers of the store's sizes.
template <FloorLayout kLayout>
class ChainedHour {
 public:
  ChainedHour(benchmark::State& state, const std::string& dir, int64_t hour)
      : files_(state, dir, hour), hour_start_ms_(kBaseMs + hour * kHourMs) {}

  void Append(int64_t ms_in_hour, std::string_view payload) {
    if constexpr (kLayout == FloorLayout::kFormat) {
      AppendFormat(ms_in_hour, payload);
    } else if constexpr (kLayout == FloorLayout::kSmall) {
      AppendSmall(ms_in_hour, payload);
    } else {
      AppendOneFile(ms_in_hour, payload);
    }
  }
  LayoutHour& files() { return files_; }

 private:
  using Cells = std::conditional_t<kLayout == FloorLayout::kOneFile,
                                   std::array<OffsetCell, kSecondsPerHour>, HeadCells>;

  void AppendFormat(int64_t ms_in_hour, std::string_view payload) {
    const int64_t deliver_at_ms = hour_start_ms_ + ms_in_hour;
    HeadCell& cell = CellOf(cells_, deliver_at_ms);
    const uint32_t pre_index = cell.head;
    const auto [record, entry] = files_.Room(kRecordHeaderSize + payload.size(), kIndexEntrySize);
    const RecordHeader header = RecordHeaderFor(deliver_at_ms, payload);
    EncodeRecordHeader(header, record);
    std::copy(payload.begin(), payload.end(), record + kRecordHeaderSize);
    EncodeIndexEntry({deliver_at_ms, offset_, header.length, header.crc, pre_index}, entry);
    offset_ += kRecordHeaderSize + payload.size();
    LinkEntry(&cell, entries_++);
  }

  void AppendSmall(int64_t ms_in_hour, std::string_view payload) {
    constexpr size_t kHeaderBytes = 12;
    constexpr size_t kEntryBytes = 16;
    const auto ms = static_cast<uint32_t>(ms_in_hour);
    HeadCell& cell = CellOf(cells_, hour_start_ms_ + ms_in_hour);
    const uint32_t pre_index = cell.head;
    const auto [record, entry] = files_.Room(kHeaderBytes + payload.size(), kEntryBytes);
    uint32_t record_crc = crc32c::ExtendLittleEndian64(0, payload.size() | uint64_t{ms} << 32);
    record_crc = crc32c::Extend(record_crc, payload.data(), payload.size());
    EncodeFixed32(record, static_cast<uint32_t>(payload.size()));
    EncodeFixed32(record + 4, record_crc);
    EncodeFixed32(record + 8, ms);
    std::copy(payload.begin(), payload.end(), record + kHeaderBytes);
    const uint64_t offset_and_ms = offset_ | uint64_t{ms} << kOffsetBits;
    EncodeFixed64(entry, offset_and_ms);
    EncodeFixed32(entry + 8, pre_index);
    const uint32_t entry_crc = crc32c::ExtendLittleEndian64(
        crc32c::ExtendLittleEndian64(0, offset_and_ms), record_crc | uint64_t{pre_index} << 32);
    EncodeFixed32(entry + 12, entry_crc);
    offset_ += kHeaderBytes + payload.size();
    LinkEntry(&cell, entries_++);
  }

  void AppendOneFile(int64_t ms_in_hour, std::string_view payload) {
    constexpr size_t kHeaderBytes = 16;
    const auto ms = static_cast<uint32_t>(ms_in_hour);
    OffsetCell& cell = cells_[SecondInHour(SecondOfMs(hour_start_ms_ + ms_in_hour))];
    const uint64_t ms_and_link = uint64_t{ms} | (cell.head & kOffsetMask) << kMsInHourBits;
    char* record = files_.Room(kHeaderBytes + payload.size(), 0).record;
    uint32_t crc = crc32c::ExtendLittleEndian64(0, payload.size() | ms_and_link << 32);
    crc = crc32c::ExtendLittleEndian32(crc, static_cast<uint32_t>(ms_and_link >> 32));
    crc = crc32c::Extend(crc, payload.data(), payload.size());
    EncodeFixed32(record, static_cast<uint32_t>(payload.size()));
    EncodeFixed32(record + 4, crc);
    EncodeFixed64(record + 8, ms_and_link);
    std::copy(payload.begin(), payload.end(), record + kHeaderBytes);
    cell.head = offset_;
    cell.count += 1;
    offset_ += kHeaderBytes + payload.size();
  }

  LayoutHour files_;
  const int64_t hour_start_ms_;
  Cells cells_;
  uint64_t offset_ = 0;  // LayoutHour writes no file header
  uint64_t entries_ = 0;
};

template <FloorLayout kLayout>
void AppendChained(benchmark::State& state, size_t payload_bytes, int64_t hours) {
  std::string dir = FreshDir("chained");
  std::vector<std::unique_ptr<ChainedHour<kLayout>>> hour_files;
  std::vector<std::function<Status()>> syncs;
  for (int64_t h = 0; h < hours; ++h) {
    hour_files.push_back(std::make_unique<ChainedHour<kLayout>>(state, dir, h));
    const LayoutHour& files = hour_files.back()->files();
    syncs.push_back([&files] { return files.data().DataSync(); });
  }
  const std::string payload(payload_bytes, 'p');
  RandomMsInHour random;
  uint64_t count = 0;
  size_t next_hour = 0;
  SyncCadence cadence;
  for (auto _ : state) {
    hour_files[next_hour]->Append(random.Next(), payload);
    next_hour = next_hour + 1 == hour_files.size() ? 0 : next_hour + 1;  // no division per record
    ++count;
    cadence.Tick(count, [&] {
      for (const auto& hour : hour_files) hour->files().Flush();
      if (!RunConcurrently(syncs).ok()) state.SkipWithError("fdatasync failed");
    });
  }
  hour_files.clear();
  std::filesystem::remove_all(dir);
}

// The floor of a store of this design: ChainedHour's work per record and nothing else (no hour
// lookup, no checks, no results, no sequence), the records round robin over `hours` hours at
// random milliseconds as BM_StoreAppend's, the data files synced on the same cadence (the index
// files are left to the kernel, as by BM_RawStoreLayout with sync_index 0). layout: a
// FloorLayout, each its own instantiation so that no record pays for choosing.
void BM_ChainedLayout(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  const int64_t hours = state.range(1);
  switch (static_cast<FloorLayout>(state.range(2))) {
    case FloorLayout::kFormat:
      AppendChained<FloorLayout::kFormat>(state, payload_bytes, hours);
      break;
    case FloorLayout::kSmall:
      AppendChained<FloorLayout::kSmall>(state, payload_bytes, hours);
      break;
    case FloorLayout::kOneFile:
      AppendChained<FloorLayout::kOneFile>(state, payload_bytes, hours);
      break;
  }
  ReportRates(state, payload_bytes);
}
BENCHMARK(BM_ChainedLayout)
    ->ArgNames({"payload", "hours", "layout"})
    ->ArgsProduct({{100}, {1, 24}, {0, 1, 2}})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// BM_RawSequentialWrite with the fdatasync run behind the writes (SyncBehind), like
// BM_StoreAppendSyncBehind.
void BM_RawSequentialWriteSyncBehind(benchmark::State& state) {
  const auto payload_bytes = static_cast<size_t>(state.range(0));
  RawFile raw(state);
  const std::string payload(payload_bytes, 'p');
  auto begin = [&] {
    raw.Flush();
    return [&raw] { return raw.file().DataSync(); };
  };
  auto finish = [&](const Status& run) {
    if (!run.ok()) state.SkipWithError("fdatasync failed");
  };
  SyncBehind commits;
  uint64_t count = 0;
  for (auto _ : state) {
    raw.Append(payload);
    commits.Tick(++count, begin, finish);
  }
  commits.Drain(finish);
  raw.Flush();
  ReportRates(state, payload_bytes);
}
BENCHMARK(BM_RawSequentialWriteSyncBehind)
    ->ArgNames({"payload"})
    ->Args({100})
    ->MinTime(2.0)
    ->UseRealTime()
    ->Unit(benchmark::kNanosecond);

// One second holding 100k records of 100 bytes, walked through its chain. Cold: the page cache
// of both files is dropped (posix_fadvise DONTNEED after a sync) before every walk.
void BM_ReadSecond(benchmark::State& state) {
  const bool cold = state.range(0) == 1;
  constexpr int kRecords = 100'000;
  std::string dir = FreshDir("read");
  StoreOptions options;
  options.dir = dir;
  const int64_t second = kBaseMs / 1000 + 17;
  {
    auto store = std::move(DelayLogStore::Open(options, nullptr)).value();
    std::string payload(100, 'r');
    for (int i = 0; i < kRecords; ++i) {
      // Neighbouring seconds interleave, so the chain is not contiguous in the files.
      if (!store->Append(second * 1000 + i % 1000, payload).ok()) state.SkipWithError("append");
      if (!store->Append((second + 1) * 1000 + i % 1000, payload).ok())
        state.SkipWithError("append");
    }
    if (!store->Close().ok()) state.SkipWithError("close failed");
  }
  auto store = std::move(DelayLogStore::Open(options, nullptr)).value();
  HourPaths paths = PathsOfHour(dir, kBaseMs / kHourMs);
  std::vector<StoredRecord> out;
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      for (const std::string& path : {paths.data, paths.index}) {
        auto file = std::move(PosixFile::Open(path, PosixFile::Mode::kReadOnly)).value();
        if (!file.DropCache().ok()) state.SkipWithError("fadvise failed");
      }
      state.ResumeTiming();
    }
    out.clear();
    if (!store->ReadSecond(second, &out).ok() || out.size() != kRecords) {
      state.SkipWithError("read failed");
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kRecords);
  state.counters["records"] = kRecords;
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReadSecond)
    ->ArgNames({"cold"})
    ->Args({0})
    ->Args({1})
    ->MinTime(1.0)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace delaybridge::storage

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("crc32c", delaybridge::storage::crc32c::HardwareAccelerated()
                                            ? "sse4.2"
                                            : "portable slice-by-8");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
