// DirectoryLock: an exclusive lock on a store directory (flock on <dir>/LOCK), held for as long
// as the object lives, so that two processes never append to the same hour files. The kernel
// drops the lock when the holder exits, however it exits, so a crash leaves nothing to clean up.
// LOCK holds the holder's pid, for the message the next process gets.
//
// flock locks belong to an open file description: a second Acquire in the same process
// conflicts too.
//
// Thread-safety: one owner.
#pragma once

#include <string>

#include "core/status.h"

namespace delaybridge::storage {

inline constexpr const char* kLockFileName = "LOCK";

class DirectoryLock {
 public:
  // FailedPrecondition naming the holder's pid when another holds it; IOError when the file
  // cannot be opened.
  static Result<DirectoryLock> Acquire(const std::string& dir);

  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  ~DirectoryLock();

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace delaybridge::storage
