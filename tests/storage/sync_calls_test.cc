// What the store syncs, seen by replacing fsync(2) and fdatasync(2) with functions that record
// the path of each call, then call the real ones: this binary is an executable of its own
// because the replacement holds for the whole process.
// - A directory the store creates is fsynced in its parent, or a power cut could take it away
//   with every synced file inside it.
// - A group commit fdatasyncs an hour's data file and leaves its index to the page cache
//   (recovery makes lost entries again from the records) until a head table is saved over the
//   index, or the hour is closed.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <string>
#include <vector>

#include "storage/delay_log_store.h"
#include "storage/format.h"
#include "storage/posix_file.h"
#include "tests/support/temp_dir.h"

namespace {

std::mutex synced_mu;
std::vector<std::string> synced;      // paths fsync was called on, in order
std::vector<std::string> datasynced;  // paths fdatasync was called on, in order

void Record(int fd, std::vector<std::string>* calls) {
  char link[64];
  char path[PATH_MAX] = {};
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  if (const ssize_t n = ::readlink(link, path, sizeof(path) - 1); n > 0) {
    std::lock_guard<std::mutex> lock(synced_mu);
    calls->emplace_back(path, static_cast<size_t>(n));
  }
}

using SyncFn = int (*)(int);

}  // namespace

extern "C" int fsync(int fd) {
  Record(fd, &synced);
  static const auto real = reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, "fsync"));
  return real(fd);
}

extern "C" int fdatasync(int fd) {
  Record(fd, &datasynced);
  static const auto real = reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, "fdatasync"));
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

// How many times fdatasync was called on path since the last ForgetDataSyncs.
size_t DataSyncs(const std::string& path) {
  std::lock_guard<std::mutex> lock(synced_mu);
  return static_cast<size_t>(std::count(datasynced.begin(), datasynced.end(), path));
}

void ForgetDataSyncs() {
  std::lock_guard<std::mutex> lock(synced_mu);
  datasynced.clear();
}

std::string RealPath(const std::string& path) {
  char real[PATH_MAX];
  return ::realpath(path.c_str(), real) != nullptr ? std::string(real) : path;
}

constexpr int64_t kHourStartMs = 1'795'363'200'000;  // 2026-11-22T16:00:00Z

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

TEST(GroupCommitSyncTest, SyncsTheDataFileAndLeavesTheIndexUntilItsTableIsSaved) {
  delaybridge::testing::TempDir dir("sync_calls_test");
  StoreOptions options;
  options.dir = dir.path() + "/delayed-0";
  auto opened = DelayLogStore::Open(options, nullptr);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<DelayLogStore> store = std::move(opened).value();
  const std::string data = RealPath(options.dir) + "/2026-11-22T16.log";
  const std::string index = RealPath(options.dir) + "/2026-11-22T16.idx";
  ForgetDataSyncs();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->Append(kHourStartMs + i * 10, "r").ok());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(DataSyncs(data), 1u);
  EXPECT_EQ(DataSyncs(index), 0u) << "a group commit without a head table to save synced the index";

  // The commit that saves a head table syncs the index it covers first.
  ForgetDataSyncs();
  for (uint64_t i = 100; i < kHeadsSaveEveryEntries; ++i) {
    ASSERT_TRUE(store->Append(kHourStartMs + static_cast<int64_t>(i % 3'600'000), "r").ok());
  }
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(DataSyncs(data), 1u);
  EXPECT_EQ(DataSyncs(index), 1u);

  // Closing an hour syncs an index the commits left behind, so its saved table covers it all.
  ForgetDataSyncs();
  ASSERT_TRUE(store->Append(kHourStartMs + 5, "r").ok());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(DataSyncs(index), 0u);
  ASSERT_TRUE(store->Close().ok());
  EXPECT_EQ(DataSyncs(index), 1u);
}

}  // namespace
}  // namespace delaybridge::storage
