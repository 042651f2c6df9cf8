#include "storage/block_cursor.h"

namespace delaybridge::storage {

Status BlockCursor::Read(uint64_t offset, size_t n, std::string_view* out) {
  bool inside = offset >= window_offset_ && offset + n <= window_offset_ + window_.size();
  if (!inside) {
    // Load a window that also covers the next reads: after offset when walking forwards,
    // before it when walking backwards.
    size_t len = std::max(n, window_bytes_);
    uint64_t start = offset;
    if (direction_ == Direction::kBackward && n < window_bytes_) {
      uint64_t end = offset + n;
      start = end > window_bytes_ ? end - window_bytes_ : 0;
      len = static_cast<size_t>(end - start);
    }
    Status s = file_->ReadAt(start, len, &window_);
    if (!s.ok()) return s;
    window_offset_ = start;
  }
  if (offset >= window_offset_ + window_.size()) {
    *out = std::string_view();
    return Status::Ok();
  }
  size_t begin = static_cast<size_t>(offset - window_offset_);
  *out = std::string_view(window_).substr(begin, n);
  return Status::Ok();
}

}  // namespace delaybridge::storage
