// SourceOffsetMarker: a 16-byte file (BRIDGE_SOURCE_OFFSET) in each store directory holding
// the offset the bridge is about to commit for the partition: every source record below it is
// durable in the store (or acknowledged in the dead-letter topic). It is written before each
// asynchronous offset commit, so after a crash the bridge skips records that the broker still
// hands out (the commit was lost) but that the store already holds; without it they would be
// stored, and delivered, twice. Layout: offset as u64 little-endian, then its bitwise NOT, so a
// torn or foreign file is detected (and ignored, costing only duplicates).
//
// The file is rewritten in place with one pwrite and not fsync'ed: a process crash keeps it
// (the page cache survives), a machine crash may lose the latest value, which only widens
// the re-delivery window back to Kafka's committed offset.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

inline constexpr const char* kSourceOffsetMarkerFileName = "BRIDGE_SOURCE_OFFSET";

class SourceOffsetMarker {
 public:
  // Opens (creating) the marker in store_dir. recovered() is the value found, if valid.
  static Result<SourceOffsetMarker> Open(const std::string& store_dir);
  SourceOffsetMarker(SourceOffsetMarker&& other) noexcept;
  SourceOffsetMarker& operator=(SourceOffsetMarker&&) = delete;
  ~SourceOffsetMarker();

  std::optional<int64_t> recovered() const { return recovered_; }
  Status Write(int64_t next_offset);
  // Makes the last Write durable (written without a sync: a lost one only re-reads records).
  Status Sync();

 private:
  SourceOffsetMarker(int fd, std::string path, std::optional<int64_t> recovered)
      : fd_(fd), path_(std::move(path)), recovered_(recovered) {}
  int fd_;
  std::string path_;
  std::optional<int64_t> recovered_;
};

}  // namespace delaybridge::plugin
