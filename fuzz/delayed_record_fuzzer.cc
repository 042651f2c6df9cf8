// Fuzzes the stored-payload codecs (docs/storage-format.md, "Bridge payload"): arbitrary bytes are
// decoded as what their first byte says (a delayed record or a cancel) or refused with an error,
// and whatever decodes encodes back to bytes that decode to the same value.
#include <cstdlib>
#include <string_view>

#include "plugin/delayed_record.h"
#include "plugin/stored_cancel.h"

namespace {

using namespace delaybridge::plugin;

template <typename Value>
void ExpectRoundTrip(const delaybridge::Result<Value>& decoded, std::string (*encode)(const Value&),
                     delaybridge::Result<Value> (*decode)(std::string_view)) {
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) std::abort();
    return;
  }
  auto again = decode(encode(decoded.value()));
  if (!again.ok() || !(again.value() == decoded.value())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Both decoders see every input: each must refuse the other's payloads, not misread them.
  ExpectRoundTrip(DecodeDelayedRecord(bytes), &EncodeDelayedRecord, &DecodeDelayedRecord);
  ExpectRoundTrip(DecodeStoredCancel(bytes), &EncodeStoredCancel, &DecodeStoredCancel);
  if (KindOfStoredPayload(bytes) == StoredPayloadKind::kCancel && DecodeDelayedRecord(bytes).ok()) {
    std::abort();
  }
  return 0;
}
