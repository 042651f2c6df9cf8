#include "plugin/source_offset_marker.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace delaybridge::plugin {

namespace {

constexpr size_t kMarkerBytes = 16;

void PutU64(uint64_t v, unsigned char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint64_t GetU64(const unsigned char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}

}  // namespace

Result<SourceOffsetMarker> SourceOffsetMarker::Open(const std::string& store_dir) {
  const std::string path = store_dir + "/" + kSourceOffsetMarkerFileName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("open " + path + ": " + std::strerror(errno));
  unsigned char buf[kMarkerBytes];
  std::optional<int64_t> recovered;
  if (::pread(fd, buf, sizeof(buf), 0) == static_cast<ssize_t>(sizeof(buf))) {
    const uint64_t value = GetU64(buf);
    if (GetU64(buf + 8) == ~value && static_cast<int64_t>(value) >= 0) {
      recovered = static_cast<int64_t>(value);
    }
  }
  return SourceOffsetMarker(fd, path, recovered);
}

SourceOffsetMarker::SourceOffsetMarker(SourceOffsetMarker&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), recovered_(other.recovered_) {
  other.fd_ = -1;
}

SourceOffsetMarker::~SourceOffsetMarker() {
  if (fd_ >= 0) ::close(fd_);
}

Status SourceOffsetMarker::Write(int64_t next_offset) {
  unsigned char buf[kMarkerBytes];
  PutU64(static_cast<uint64_t>(next_offset), buf);
  PutU64(~static_cast<uint64_t>(next_offset), buf + 8);
  if (::pwrite(fd_, buf, sizeof(buf), 0) != static_cast<ssize_t>(sizeof(buf))) {
    return Status::IOError("write " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status SourceOffsetMarker::Sync() {
  if (::fdatasync(fd_) != 0) return Status::IOError("sync " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace delaybridge::plugin
