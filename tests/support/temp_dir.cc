#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace delaybridge::testing {

namespace {

std::string BaseDirectory(TempDir::Place place) {
  std::error_code ignored;
  if (place == TempDir::Place::kMemory && std::filesystem::is_directory("/dev/shm", ignored)) {
    return "/dev/shm";
  }
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

}  // namespace

TempDir::TempDir(const std::string& prefix, Place place) {
  std::string pattern = BaseDirectory(place) + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  if (keep_ || std::getenv("DELAYBRIDGE_KEEP_TEST_DIRS")) {
    std::fprintf(stderr, "kept test directory %s\n", path_.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace delaybridge::testing
