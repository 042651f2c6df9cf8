// AppendBuffer: the bytes of one hour file waiting for write(), with room handed out at the end
// so that a record header or an index entry is encoded once, straight into the buffer, instead
// of into a temporary that is then copied (HourAppender::Append, once per record). The capacity
// is fixed: the caller keeps every Append within it, which the flush rules of
// docs/storage-format.md "Writing and the sync order" bound. Memory is allocated at the first
// Append after construction or Release, uninitialised: pages are touched only as they fill.
// Thread-safety: one owner thread.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory>
#include <string_view>

namespace delaybridge::storage {

class AppendBuffer {
 public:
  explicit AppendBuffer(size_t capacity) : capacity_(capacity) {}

  // Returns the n bytes added at the end, for the caller to fill; size() + n <= capacity.
  char* Append(size_t n) {
    assert(size_ + n <= capacity_);
    if (bytes_ == nullptr) bytes_ = std::make_unique_for_overwrite<char[]>(capacity_);
    char* room = bytes_.get() + size_;
    size_ += n;
    return room;
  }
  std::string_view view() const { return {bytes_.get(), size_}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void Clear() { size_ = 0; }
  // Frees the memory and drops the content (a parked hour keeps no buffers).
  void Release() {
    bytes_.reset();
    size_ = 0;
  }

 private:
  const size_t capacity_;
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0;
};

}  // namespace delaybridge::storage
