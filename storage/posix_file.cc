#include "storage/posix_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace delaybridge::storage {
namespace {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " " + path + ": " + std::strerror(err));
}

}  // namespace

Result<PosixFile> PosixFile::Open(const std::string& path, Mode mode) {
  int flags = O_CLOEXEC;
  switch (mode) {
    case Mode::kReadOnly:
      flags |= O_RDONLY;
      break;
    case Mode::kReadWrite:
      flags |= O_RDWR;
      break;
    case Mode::kCreateReadWrite:
      flags |= O_RDWR | O_CREAT;
      break;
  }
  // Record contents: readable by the bridge's user only.
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  return PosixFile(fd, path);
}

PosixFile::PosixFile(PosixFile&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

PosixFile::~PosixFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status PosixFile::ReadAt(uint64_t offset, size_t n, std::string* out) const {
  // n often comes from the file itself (a record's length): never allocate past its end, so a
  // crafted length cannot force a huge allocation.
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("stat", path_, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  n = offset >= size ? 0 : static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  out->resize(n);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, out->data() + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("read", path_, errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  out->resize(done);
  return Status::Ok();
}

Status PosixFile::WriteAt(uint64_t offset, std::string_view data) {
  return WriteAt2(offset, data, std::string_view());
}

Status PosixFile::WriteAt2(uint64_t offset, std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    iovec iov[2] = {{const_cast<char*>(a.data()), a.size()},
                    {const_cast<char*>(b.data()), b.size()}};
    ssize_t w = ::pwritev(fd_, iov, 2, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path_, errno);
    }
    auto written = static_cast<size_t>(w);
    offset += written;
    size_t from_a = std::min(written, a.size());
    a.remove_prefix(from_a);
    b.remove_prefix(written - from_a);
  }
  return Status::Ok();
}

Result<uint64_t> PosixFile::Size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("stat", path_, errno);
  return static_cast<uint64_t>(st.st_size);
}

Status PosixFile::Truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    return ErrnoStatus("truncate", path_, errno);
  }
  return Status::Ok();
}

Status PosixFile::DataSync() const {
  if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_, errno);
  return Status::Ok();
}

Result<PosixFile> PosixFile::Duplicate() const {
  int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus("duplicate descriptor of", path_, errno);
  return PosixFile(fd, path_);
}

Status PosixFile::DropCache() {
  int err = ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (err != 0) return ErrnoStatus("fadvise", path_, err);
  return Status::Ok();
}

Status CreateDirIfMissing(const std::string& dir) {
  const bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) return ErrnoStatus("create directory", dir, errno);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus("stat", dir, errno);
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(dir + " is not a directory");
  if (!created) return Status::Ok();
  // The new entry is in the parent's page cache only: without this a power cut could take the
  // directory, and every synced file in it, away.
  const size_t slash = dir.find_last_of('/');
  const std::string parent = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : dir.substr(0, slash);
  return SyncDir(parent);
}

Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus("fsync directory", dir, err);
  return Status::Ok();
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus("list directory", dir, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

Result<bool> FileExists(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return ErrnoStatus("stat", path, errno);
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("remove", path, errno);
  return Status::Ok();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus("rename " + from + " to", to, errno);
  }
  return Status::Ok();
}

}  // namespace delaybridge::storage
