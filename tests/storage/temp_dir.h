// TempDir: a fresh directory under $TMPDIR (or /tmp), or under a given base, for one test,
// removed afterwards.
// Thread-safety: one owner.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace delaybridge::storage::testing {

class TempDir {
 public:
  TempDir() : TempDir(std::filesystem::temp_directory_path().string()) {}
  explicit TempDir(const std::string& base) {
    std::random_device random;
    path_ = (std::filesystem::path(base) /
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

namespace delaybridge::storage::testing {

// A memory file system when the machine has one: for tests whose subject is logic, not
// durability, and that would otherwise spend minutes in fdatasync.
inline std::string FastTempBase() {
  std::error_code ignored;
  if (std::filesystem::is_directory("/dev/shm", ignored)) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

}  // namespace delaybridge::storage::testing
