// bench_storage_memory: resident memory of a DelayLogStore holding 10M pending records spread
// over 30 days (720 delivery hours), small payloads. Memory must not grow with the record
// count: prints VmRSS before opening, after every 1M records, and the peak (VmHWM).
//
// Run (Release build): build-rel/bin/bench_storage_memory [records] [dir]
// Defaults: 10000000 records, a fresh directory under /tmp (removed afterwards).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "storage/delay_log_store.h"

namespace {

constexpr int64_t kBaseMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z
constexpr int64_t kSpanMs = 30LL * 24 * 3'600'000;
constexpr uint64_t kSyncEveryRecords = 100'000;

// Reads one "Vm...:   123 kB" field of /proc/self/status, in KiB.
long StatusKiB(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  using delaybridge::storage::DelayLogStore;
  uint64_t records = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  std::string dir =
      argc > 2 ? argv[2] : "/tmp/delaybridge-bench-memory-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  long rss_before_kib = StatusKiB("VmRSS");
  std::printf("records=%llu dir=%s rss_before_open=%ld KiB\n",
              static_cast<unsigned long long>(records), dir.c_str(), rss_before_kib);
  std::fflush(stdout);

  delaybridge::storage::StoreOptions options;
  options.dir = dir;
  auto opened = DelayLogStore::Open(options, nullptr);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  auto store = std::move(opened).value();
  std::mt19937_64 random(7);
  std::string payload(24, 'm');  // e.g. a key and a small value
  auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1; i <= records; ++i) {
    int64_t at = kBaseMs + static_cast<int64_t>(random() % kSpanMs);
    if (auto r = store->Append(at, payload); !r.ok()) {
      std::fprintf(stderr, "append: %s\n", r.status().ToString().c_str());
      return 1;
    }
    if (i % kSyncEveryRecords == 0) {
      if (auto s = store->Sync(); !s.ok()) {
        std::fprintf(stderr, "sync: %s\n", s.ToString().c_str());
        return 1;
      }
    }
    if (i % 1'000'000 == 0) {
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("records=%llu rss=%ld KiB elapsed=%.1f s\n", static_cast<unsigned long long>(i),
                  StatusKiB("VmRSS"), seconds);
      std::fflush(stdout);
    }
  }
  if (auto s = store->Sync(); !s.ok()) return 1;
  std::printf("final: hours=%zu rss=%ld KiB peak(VmHWM)=%ld KiB store_rss_growth=%ld KiB\n",
              store->Hours().size(), StatusKiB("VmRSS"), StatusKiB("VmHWM"),
              StatusKiB("VmRSS") - rss_before_kib);
  if (auto s = store->Close(); !s.ok()) return 1;
  store.reset();
  if (argc <= 2) std::filesystem::remove_all(dir);
  return 0;
}
