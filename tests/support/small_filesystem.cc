#include "tests/support/small_filesystem.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace delaybridge::testing {

namespace {

constexpr char kFillerName[] = "/filler";

}  // namespace

SmallFilesystem::SmallFilesystem(const std::string& prefix, size_t bytes) : dir_(prefix) {
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    error_ = "mount tmpfs on " + dir_.path() + ": " + std::strerror(errno) + " (needs root)";
    return;
  }
  mounted_ = true;
}

SmallFilesystem::~SmallFilesystem() {
  if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
}

bool SmallFilesystem::Fill() {
  const std::string filler = path() + kFillerName;
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::vector<char> block(64 * 1024, 'f');
  bool full = false;
  while (!full) {
    // Smaller and smaller writes take the last free pages too.
    for (size_t size = block.size(); size > 0; size /= 2) {
      if (::write(fd, block.data(), size) >= 0) break;
      if (errno != ENOSPC) {
        ::close(fd);
        return false;
      }
      if (size == 1) full = true;
    }
  }
  ::close(fd);
  return true;
}

void SmallFilesystem::Free() { ::unlink((path() + kFillerName).c_str()); }

}  // namespace delaybridge::testing
