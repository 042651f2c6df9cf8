// Fuzzes every reader of the store's files (hour data, index, head table, checkpoint) with
// crafted files: the operators' DelayLogReader (verify, scan, per-second chains), then the
// bridge's own DelayLogStore (recovery on open, reading every second, appending and syncing
// after recovery). Damage is reported or repaired, never a crash, a hang or a huge allocation.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/store_files.h"
#include "storage/delay_log_reader.h"
#include "storage/delay_log_store.h"
#include "storage/delivery_checkpoint.h"

namespace {

using namespace delaybridge;
using namespace delaybridge::storage;

// A fresh empty directory for this process, reused by every input.
const std::string& StoreDir() {
  static const std::string dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "store_fuzzer.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    return pattern;
  }();
  return dir;
}

void EmptyDir(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::filesystem::remove_all(entry.path());
  }
}

void ReadWithTheOperatorsReader(const std::string& dir) {
  auto reader = DelayLogReader::Open(dir);
  if (!reader.ok()) return;
  (void)(*reader)->Verify();
  for (int64_t hour : (*reader)->Hours()) {
    (void)(*reader)->SummarizeHour(hour);
    (void)(*reader)->ForEachRecord(hour, [](const HourRecordView&) { return true; });
    auto counts = (*reader)->SecondCounts(hour);
    if (!counts.ok()) continue;
    for (size_t s = 0; s < counts->size(); ++s) {
      if ((*counts)[s] == 0) continue;
      std::vector<ChainRecordView> records;
      (void)(*reader)->ReadSecond(hour * 3600 + static_cast<int64_t>(s), &records);
    }
  }
}

void ReadWithTheStore(const std::string& dir) {
  (void)ReadDeliveryCheckpoint(dir);
  StoreOptions options;
  options.dir = dir;
  RecoveryReport report;
  auto store = DelayLogStore::Open(options, &report);
  if (!store.ok()) return;
  int64_t second = fuzz::kStoreHourStartMs / 1000;
  const int64_t end = second + 3600;
  while (second < end) {
    auto next = (*store)->NextNonEmptySecond(second, end);
    if (!next.ok() || !next->has_value()) break;
    std::vector<StoredRecord> records;
    (void)(*store)->ReadSecond(**next, &records);
    second = **next + 1;
  }
  // Recovery left a store that takes appends and syncs them.
  if ((*store)->Append(fuzz::kStoreHourStartMs + 1500, "after recovery").ok()) {
    (void)(*store)->Sync();
  }
  (void)(*store)->Close();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = StoreDir();
  EmptyDir(dir);
  fuzz::UnpackStore(data, size, dir);
  ReadWithTheOperatorsReader(dir);
  ReadWithTheStore(dir);
  return 0;
}
