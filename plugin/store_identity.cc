#include "plugin/store_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

namespace delaybridge::plugin {

namespace {

constexpr size_t kIdDigits = 16;

bool IsStoreId(const std::string& text) {
  if (text.size() != kIdDigits) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string NewStoreId() {
  std::random_device entropy;
  const uint64_t id = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  char text[kIdDigits + 1];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(id));
  return text;
}

Status SyncDir(const std::string& dir_path) {
  const int dir = ::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Status::IOError("open " + dir_path + ": " + std::strerror(errno));
  const int synced = ::fsync(dir);
  ::close(dir);
  if (synced != 0) return Status::IOError("fsync " + dir_path + ": " + std::strerror(errno));
  return Status::Ok();
}

// Written to a temporary file, synced and renamed, so a crash never leaves a torn file.
Status WriteFileDurably(const std::string& store_dir, const char* name, const std::string& text) {
  const std::string path = store_dir + "/" + name;
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("create " + tmp + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved_errno = errno;
  const bool synced = written && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!synced) return Status::IOError("write " + tmp + ": " + std::strerror(saved_errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::IOError("rename " + tmp + ": " + std::strerror(errno));
  }
  return SyncDir(store_dir);
}

}  // namespace

Result<std::string> ReadOrCreateStoreId(const std::string& store_dir) {
  std::ifstream in(store_dir + "/" + kStoreIdFileName);
  std::string id;
  if (in && std::getline(in, id) && IsStoreId(id)) return id;
  // Missing, or torn before the rename protected it: a new id only means a rebuild.
  id = NewStoreId();
  if (Status s = WriteFileDurably(store_dir, kStoreIdFileName, id + "\n"); !s.ok()) return s;
  return id;
}

Status RecordTakeover(const std::string& store_dir, const std::string& commit_metadata) {
  return WriteFileDurably(store_dir, kTakenOverFromFileName, commit_metadata + "\n");
}

std::optional<std::string> ReadTakeover(const std::string& store_dir) {
  std::ifstream in(store_dir + "/" + kTakenOverFromFileName);
  std::string line;
  // Unreadable, or without its newline (not written by RecordTakeover): no takeover to trust,
  // which only means a rebuild.
  if (!in || !std::getline(in, line) || in.eof()) return std::nullopt;
  return line;
}

Status MarkClosedCleanly(const std::string& store_dir) {
  const std::string path = store_dir + "/" + kClosedCleanlyFileName;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("create " + path + ": " + std::strerror(errno));
  ::close(fd);
  return SyncDir(store_dir);
}

Result<bool> TakeClosedCleanly(const std::string& store_dir) {
  const std::string path = store_dir + "/" + kClosedCleanlyFileName;
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return false;
    return Status::IOError("remove " + path + ": " + std::strerror(errno));
  }
  if (Status s = SyncDir(store_dir); !s.ok()) return s;
  return true;
}

}  // namespace delaybridge::plugin
