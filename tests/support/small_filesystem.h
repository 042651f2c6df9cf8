// SmallFilesystem: a tmpfs of a few megabytes mounted on a fresh directory, so a test can fill a
// real filesystem and meet the kernel's own ENOSPC, then give the space back. Mounting needs root
// (CAP_SYS_ADMIN), as CI has; mounted() says whether it worked and error() why not.
//
// Thread-safety: one owner; the mount itself may be used by any process.
#pragma once

#include <cstddef>
#include <string>

#include "tests/support/temp_dir.h"

namespace delaybridge::testing {

class SmallFilesystem {
 public:
  SmallFilesystem(const std::string& prefix, size_t bytes);
  ~SmallFilesystem();  // unmounts (lazily, should a process still hold a file open)
  SmallFilesystem(const SmallFilesystem&) = delete;
  SmallFilesystem& operator=(const SmallFilesystem&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return dir_.path(); }

  // Writes a file that takes every free byte; false if the filesystem did not fill.
  bool Fill();
  // Removes that file: the space is back.
  void Free();

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string error_;
};

}  // namespace delaybridge::testing
