// Where bench_storage's benchmarks write: $DELAYBRIDGE_BENCH_DIR or /tmp (on disk, not tmpfs,
// so that fdatasync costs what it costs a store).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace delaybridge::storage {

// A fresh, empty directory named after the benchmark and this process.
inline std::string FreshDir(const std::string& name) {
  const char* base = std::getenv("DELAYBRIDGE_BENCH_DIR");
  std::filesystem::path dir = std::filesystem::path(base != nullptr ? base : "/tmp") /
                              ("delaybridge-bench-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace delaybridge::storage
