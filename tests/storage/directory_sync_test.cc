// A directory the store creates is fsynced in its parent, or a power cut could take it away with
// every synced file inside it. This binary replaces fsync(2) with one that records which
// directory each call synced, then calls the real one: it has its own executable because the
// replacement holds for the whole process.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "storage/delay_log_store.h"
#include "storage/posix_file.h"
#include "tests/support/temp_dir.h"

namespace {

std::mutex synced_mu;
std::vector<std::string> synced;  // paths fsync was called on, in order

}  // namespace

extern "C" int fsync(int fd) {
  char link[64];
  char path[PATH_MAX] = {};
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  if (const ssize_t n = ::readlink(link, path, sizeof(path) - 1); n > 0) {
    std::lock_guard<std::mutex> lock(synced_mu);
    synced.emplace_back(path, static_cast<size_t>(n));
  }
  using Fsync = int (*)(int);
  static const auto real = reinterpret_cast<Fsync>(::dlsym(RTLD_NEXT, "fsync"));
  return real(fd);
}

namespace delaybridge::storage {
namespace {

bool Synced(const std::string& path) {
  std::lock_guard<std::mutex> lock(synced_mu);
  for (const std::string& p : synced) {
    if (p == path) return true;
  }
  return false;
}

TEST(DirectorySyncTest, ANewStoreDirectoryIsSyncedInItsParent) {
  delaybridge::testing::TempDir dir("directory_sync_test");
  char real_parent[PATH_MAX];
  ASSERT_NE(::realpath(dir.path().c_str(), real_parent), nullptr);
  ASSERT_FALSE(Synced(real_parent));
  StoreOptions options;
  options.dir = dir.path() + "/delayed-0";
  auto store = DelayLogStore::Open(options, nullptr);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(Synced(real_parent)) << "the parent of the new store directory was not fsynced";
}

TEST(DirectorySyncTest, AnExistingDirectoryIsLeftAlone) {
  delaybridge::testing::TempDir dir("directory_sync_test");
  char real_parent[PATH_MAX];
  ASSERT_NE(::realpath(dir.path().c_str(), real_parent), nullptr);
  const std::string existing = dir.path() + "/existing";
  ASSERT_TRUE(CreateDirIfMissing(existing).ok());
  {
    std::lock_guard<std::mutex> lock(synced_mu);
    synced.clear();
  }
  ASSERT_TRUE(CreateDirIfMissing(existing).ok());
  EXPECT_FALSE(Synced(real_parent));
}

}  // namespace
}  // namespace delaybridge::storage
