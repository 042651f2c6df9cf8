// Writing a store's delivery checkpoint (storage/delivery_checkpoint.h), the two ways the code
// can: overwriting the older of the file's two slots in place (every write but a store's
// first), and replacing the file whole (write a temporary file, fdatasync, rename, fsync the
// directory: a store's first write, and one over a file without a valid slot). The bridge writes
// one per store up to ten times a second under load (storage.checkpoint_interval_ms), on its
// disk thread.
//
// Run (Release build): build-rel/bin/bench_storage --benchmark_filter=Checkpoint. CPU time is
// the writing thread's, kernel included; wall time adds the wait for the device.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "bench/storage/bench_dir.h"
#include "storage/delivery_checkpoint.h"
#include "storage/format.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {
namespace {

DeliveryCheckpoint CheckpointNumber(int64_t n) {
  return DeliveryCheckpoint{1'795'363'200'000 + n, static_cast<uint32_t>(n), 1'795'881'000'000};
}

void BM_CheckpointInPlace(benchmark::State& state) {
  const std::string dir = FreshDir("checkpoint-in-place");
  int64_t n = 0;
  if (!WriteDeliveryCheckpoint(dir, CheckpointNumber(n++)).ok()) state.SkipWithError("create");
  for (auto _ : state) {
    if (!WriteDeliveryCheckpoint(dir, CheckpointNumber(n++)).ok()) state.SkipWithError("write");
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CheckpointInPlace)->MinTime(2.0)->Unit(benchmark::kMicrosecond);

// Each write finds a file without a valid slot (made so, untimed, before it) and replaces it
// whole, renaming over the old file as every write did before the slots.
void BM_CheckpointReplaced(benchmark::State& state) {
  const std::string dir = FreshDir("checkpoint-replaced");
  const std::string path = dir + "/" + kCheckpointFileName;
  int64_t n = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Status damaged = [&] {
      Result<PosixFile> file = PosixFile::Open(path, PosixFile::Mode::kCreateReadWrite);
      if (!file.ok()) return file.status();
      return file->WriteAt(0, std::string(kCheckpointFileSize, 'x'));
    }();
    if (!damaged.ok()) state.SkipWithError("damage");
    state.ResumeTiming();
    if (!WriteDeliveryCheckpoint(dir, CheckpointNumber(n++)).ok()) state.SkipWithError("write");
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_CheckpointReplaced)->MinTime(2.0)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace delaybridge::storage
