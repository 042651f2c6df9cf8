// Fuzzes the committed-progress metadata parser: the text comes from Kafka, where any client of
// the group could have written it; it is parsed, found foreign, or refused, never a crash, and
// what parses encodes back to text that parses the same.
#include <cstdlib>
#include <string>

#include "plugin/progress_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delaybridge::plugin;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseProgressMetadata(text);
  if (!parsed.ok() || !parsed->has_value()) return 0;
  auto again = ParseProgressMetadata(EncodeProgressMetadata(**parsed));
  if (!again.ok() || !again->has_value()) std::abort();
  const ProgressMetadata& a = **parsed;
  const ProgressMetadata& b = **again;
  if (a.store_id != b.store_id || a.checkpoint_ms != b.checkpoint_ms ||
      a.late_below != b.late_below || a.ingest_position != b.ingest_position) {
    std::abort();
  }
  return 0;
}
