#include "storage/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace delaybridge::storage {

namespace {

// The pid the holder wrote, or "unknown".
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "unknown";
  std::string pid(buf, static_cast<size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

Result<DirectoryLock> DirectoryLock::Acquire(const std::string& dir) {
  const std::string path = dir + "/" + kLockFileName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = HolderPid(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::FailedPrecondition(dir + " is in use by another process (pid " + holder +
                                        ", holding " + path +
                                        "): two bridges on one storage.dir would overwrite each "
                                        "other's files; give each instance its own");
    }
    return Status::IOError("lock " + path + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int err = errno;
    ::close(fd);
    return Status::IOError("write " + path + ": " + std::strerror(err));
  }
  return DirectoryLock(fd);
}

DirectoryLock::DirectoryLock(DirectoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DirectoryLock& DirectoryLock::operator=(DirectoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace delaybridge::storage
