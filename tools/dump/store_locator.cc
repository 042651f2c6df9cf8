#include "tools/dump/store_locator.h"

#include <sys/stat.h>

#include <algorithm>

#include "storage/delay_log_reader.h"
#include "storage/posix_file.h"

namespace delaybridge::dump {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<bool> IsStore(const std::string& dir) {
  Result<std::unique_ptr<storage::DelayLogReader>> reader = storage::DelayLogReader::Open(dir);
  if (!reader.ok()) return reader.status();
  return (*reader)->LooksLikeStore();
}

}  // namespace

Result<std::vector<std::string>> LocateStores(const std::string& path) {
  Result<bool> exists = storage::FileExists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return Status::NotFound(path + ": no such directory");
  if (!IsDirectory(path)) return Status::InvalidArgument(path + ": not a directory");
  Result<bool> is_store = IsStore(path);
  if (!is_store.ok()) return is_store.status();
  if (*is_store) return std::vector<std::string>{path};
  Result<std::vector<std::string>> names = storage::ListDir(path);
  if (!names.ok()) return names.status();
  std::vector<std::string> stores;
  for (const std::string& name : *names) {
    std::string child = path + "/" + name;
    if (!IsDirectory(child)) continue;
    Result<bool> child_is_store = IsStore(child);
    if (!child_is_store.ok()) return child_is_store.status();
    if (*child_is_store) stores.push_back(child);
  }
  if (stores.empty()) {
    return Status::InvalidArgument(
        path +
        ": not a DelayBridge store (no YYYY-MM-DDTHH.log hour file, no CHECKPOINT) and no "
        "store directory inside it (a store that never received a record looks like this too)");
  }
  std::sort(stores.begin(), stores.end());
  return stores;
}

}  // namespace delaybridge::dump
