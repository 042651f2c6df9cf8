// Fuzzes the stored-record codec (docs/storage-format.md, "Bridge payload"): arbitrary bytes are
// decoded or refused with an error, and whatever decodes encodes back to bytes that decode to the
// same record.
#include <cstdlib>
#include <string_view>

#include "plugin/delayed_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delaybridge::plugin;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto decoded = DecodeDelayedRecord(bytes);
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) std::abort();
    return 0;
  }
  auto again = DecodeDelayedRecord(EncodeDelayedRecord(*decoded));
  if (!again.ok() || !(*again == *decoded)) std::abort();
  return 0;
}
