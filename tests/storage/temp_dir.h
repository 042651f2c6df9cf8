// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed afterwards.
// Thread-safety: one owner.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace delaybridge::storage::testing {

class TempDir {
 public:
  TempDir() {
    std::random_device random;
    std::filesystem::path base = std::filesystem::temp_directory_path();
    path_ = (base /
             ("delaybridge-storage-" + std::to_string(random()) + "-" + std::to_string(random())))
                .string();
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace delaybridge::storage::testing
