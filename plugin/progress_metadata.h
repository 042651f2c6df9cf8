// ProgressMetadata: the part of a delay partition's progress that travels in the metadata of
// the bridge's committed offset (the committed offset itself is the low watermark L; see
// plugin/partition_progress.h). Together they are everything a new owner needs to rebuild the
// partition's store from the delay topic, so no other store of state is needed: Kafka's own
// replicated __consumer_offsets holds it.
//
// Text, so `kafka-consumer-groups.sh` users and logs can read it, well under Kafka's default
// offset.metadata.max.bytes (4096):
//   delaybridge/1 store=<16 hex digits> checkpoint_ms=<ms> late_below=<offset> ingest=<offset>
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

struct ProgressMetadata {
  std::string store_id;         // the store that committed it (plugin/store_identity.h)
  int64_t checkpoint_ms = 0;    // every record placed before this time was delivered
  int64_t late_below = 0;       // LL: late or dead-lettered records below it are finished
  int64_t ingest_position = 0;  // I: the next offset that store had not read yet

  // Whether a record read again from the delay topic, and accepted now, was finished by the
  // previous owner: requested_ms is the time its headers ask for. Exact for on-time records
  // before the checkpoint and for late ones below LL; anything else is delivered again (a
  // bounded duplicate, never a loss). A record rejected now is never skipped: the previous owner
  // may have accepted it under another configuration, so it is dead-lettered again.
  bool Finished(int64_t offset, int64_t requested_ms) const {
    return offset < late_below && requested_ms < checkpoint_ms;
  }
};

std::string EncodeProgressMetadata(const ProgressMetadata& metadata);
// Empty text (an offset committed without metadata) is nullopt; text that is not ours is
// InvalidArgument.
Result<std::optional<ProgressMetadata>> ParseProgressMetadata(const std::string& text);

}  // namespace delaybridge::plugin
