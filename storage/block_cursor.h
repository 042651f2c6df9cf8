// BlockCursor: reads small pieces of a file through one cached window, so walking an index
// chain backwards or a second's records forwards costs one read per window instead of one
// system call per entry. Thread-safety: one owner; the file must outlive the cursor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "storage/posix_file.h"

namespace delaybridge::storage {

class BlockCursor {
 public:
  enum class Direction { kForward, kBackward };

  BlockCursor(const PosixFile* file, Direction direction, size_t window_bytes)
      : file_(file), direction_(direction), window_bytes_(window_bytes) {}

  // Points *out at bytes [offset, offset + n), or at fewer when the file ends first. The view
  // stays valid until the next call.
  Status Read(uint64_t offset, size_t n, std::string_view* out);

 private:
  const PosixFile* file_;
  Direction direction_;
  size_t window_bytes_;
  uint64_t window_offset_ = 0;
  std::string window_;
};

}  // namespace delaybridge::storage
