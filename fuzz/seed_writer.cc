// Writes the fuzzers' seed corpora with the real encoders, so every seed is a valid input that
// the fuzzer then mutates: fuzz/corpus/<target>/. Run by scripts/fuzz.sh --seeds; the files are
// committed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz/store_files.h"
#include "plugin/delayed_record.h"
#include "plugin/progress_metadata.h"
#include "plugin/stored_cancel.h"
#include "storage/delay_log_store.h"
#include "storage/delivery_checkpoint.h"

namespace {

using namespace delaybridge;
namespace fs = std::filesystem;

void WriteSeed(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

plugin::DelayedRecord Record(int i) {
  plugin::DelayedRecord r;
  r.target_topic = "delivered";
  r.key = "key-" + std::to_string(i);
  if (i % 3 != 0) r.value = std::string(static_cast<size_t>(i) * 7, 'v');
  r.headers = {{"trace", "t" + std::to_string(i)}, {"null", std::nullopt}};
  r.source_topic = "delayed";
  r.source_partition = i % 4;
  r.source_offset = 1000 + i;
  r.source_timestamp_ms = i % 2 ? -1 : fuzz::kStoreHourStartMs;
  r.requested_deliver_at_ms = fuzz::kStoreHourStartMs + i * 700;
  return r;
}

plugin::StoredCancel Cancel(int64_t target_offset) {
  return plugin::StoredCancel{"delayed", 1, 2000 + target_offset, target_offset,
                              fuzz::kStoreHourStartMs};
}

// One store seed: records over a few seconds, closed (head table saved), with a checkpoint
// written `checkpoints` times (the second write fills the file's other slot).
std::string StoreSeed(const fs::path& scratch, int records, int checkpoints) {
  fs::remove_all(scratch);
  storage::StoreOptions options;
  options.dir = scratch.string();
  auto store = storage::DelayLogStore::Open(options, nullptr);
  if (!store.ok()) throw std::runtime_error(store.status().ToString());
  for (int i = 0; i < records; ++i) {
    const plugin::DelayedRecord r = Record(i);
    (void)(*store)->Append(r.requested_deliver_at_ms, plugin::EncodeDelayedRecord(r));
  }
  // A cancel of the second record, in its second (as the bridge stores one).
  if (records >= 2) {
    const plugin::DelayedRecord target = Record(1);
    (void)(*store)->Append(target.requested_deliver_at_ms,
                           plugin::EncodeStoredCancel(Cancel(target.source_offset)));
  }
  (void)(*store)->Close();
  for (int i = 0; i < checkpoints; ++i) {
    (void)storage::WriteDeliveryCheckpoint(
        options.dir, {fuzz::kStoreHourStartMs + 1400 + i, 1, fuzz::kStoreHourStartMs + 2000});
  }
  return fuzz::PackStore(options.dir);
}

// A delay_headers_fuzzer input: flags, header count, (name, has value, value) pieces, value.
std::string HeadersSeed(const std::vector<std::pair<std::string, std::string>>& headers) {
  const auto piece = [](const std::string& s) {
    return std::string{static_cast<char>(s.size() & 0xFF), static_cast<char>(s.size() >> 8)} + s;
  };
  std::string seed{'\x01', static_cast<char>(headers.size())};
  for (const auto& [name, value] : headers) seed += piece(name) + '\x01' + piece(value);
  return seed + "the record's value";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seed_writer CORPUS_DIR\n";
    return 2;
  }
  const fs::path corpus(argv[1]);
  const fs::path scratch = fs::temp_directory_path() / "fuzz_seed_writer_store";
  WriteSeed(corpus / "store", "empty-hour", StoreSeed(scratch, 0, 0));
  // The committed three-records and twelve-records predate checkpoint version 2, so their
  // version 1 checkpoints keep the upgrade path fuzzed; rewriting the seeds makes them version 2.
  WriteSeed(corpus / "store", "three-records", StoreSeed(scratch, 3, 1));
  WriteSeed(corpus / "store", "twelve-records", StoreSeed(scratch, 12, 1));
  WriteSeed(corpus / "store", "three-records-two-checkpoints", StoreSeed(scratch, 3, 2));
  fs::remove_all(scratch);

  for (int i = 0; i < 4; ++i) {
    WriteSeed(corpus / "delayed_record", "record-" + std::to_string(i),
              plugin::EncodeDelayedRecord(Record(i)));
  }
  WriteSeed(corpus / "delayed_record", "cancel", plugin::EncodeStoredCancel(Cancel(1001)));
  WriteSeed(corpus / "delay_headers", "delay", HeadersSeed({{"x-delay", "30000"}}));
  WriteSeed(corpus / "delay_headers", "cancel", HeadersSeed({{"x-delay-cancel", "delayed/0/1"}}));
  WriteSeed(corpus / "delay_headers", "deliver-at-and-target",
            HeadersSeed({{"x-deliver-at", "1800000005000"}, {"x-target-topic", "orders"}}));
  WriteSeed(corpus / "delay_headers", "bad-delay", HeadersSeed({{"x-delay", "-12x"}}));
  WriteSeed(corpus / "delay_headers", "reserved",
            HeadersSeed({{"x-delay-source", "delayed/0/1"}, {"x-delay", "1"}}));
  WriteSeed(corpus / "progress_metadata", "progress",
            plugin::EncodeProgressMetadata({"0123456789abcdef", 1'800'000'000'000, 42, 57}));
  return 0;
}
