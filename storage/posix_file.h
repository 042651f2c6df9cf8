// PosixFile: a file descriptor with positional reads and writes, fdatasync and truncation,
// every error returned as a Status naming the file. Plus directory helpers (list, fsync,
// remove). Thread-safety: a PosixFile has one owner; the free functions are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace delaybridge::storage {

class PosixFile {
 public:
  enum class Mode { kReadOnly, kReadWrite, kCreateReadWrite };

  static Result<PosixFile> Open(const std::string& path, Mode mode);
  PosixFile() = default;
  PosixFile(PosixFile&& other) noexcept;
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;
  ~PosixFile();

  // Reads up to n bytes at offset into *out (resized to what was read: short only at EOF). Never
  // allocates past the file's current end, whatever n says.
  Status ReadAt(uint64_t offset, size_t n, std::string* out) const;
  // Writes all of data at offset.
  Status WriteAt(uint64_t offset, std::string_view data);
  // Writes a then b at offset with one system call when possible.
  Status WriteAt2(uint64_t offset, std::string_view a, std::string_view b);
  Result<uint64_t> Size() const;
  Status Truncate(uint64_t size);
  Status DataSync() const;
  // A second descriptor of the same open file (dup), closed independently: lets another thread
  // fdatasync the file while this one may be closed.
  Result<PosixFile> Duplicate() const;
  // Tells the kernel the cached pages of this file are not needed (benchmarks, cold reads).
  Status DropCache();

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Creates dir (mode 0700: the bridge's user only) when it is missing, and then fsyncs its parent
// so the new entry is durable too; InvalidArgument when dir exists and is no directory.
Status CreateDirIfMissing(const std::string& dir);
Status SyncDir(const std::string& dir);
Result<std::vector<std::string>> ListDir(const std::string& dir);
// True when path exists; an error other than "does not exist" is returned as a Status.
Result<bool> FileExists(const std::string& path);
Status RemoveFile(const std::string& path);  // ok when already absent
Status RenameFile(const std::string& from, const std::string& to);

}  // namespace delaybridge::storage
