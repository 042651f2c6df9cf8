// Fuzzes the stored-payload codecs (docs/storage-format.md, "Bridge payload"): arbitrary bytes are
// decoded as what their first byte says (a delayed record or a cancel) or refused with an error,
// and whatever decodes encodes back to bytes that decode to the same value; an EncodedRecord is
// made from exactly the bytes that decode, and its fixed fields read what the decoder read.
#include <cstdlib>
#include <string_view>

#include "plugin/delayed_record.h"
#include "plugin/encoded_record.h"
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

// The in-place reader agrees with the decoder on every input.
void ExpectEncodedRecordAgrees(std::string_view bytes) {
  const auto decoded = DecodeDelayedRecord(bytes);
  const auto encoded = EncodedRecord::FromBytes(std::string(bytes));
  if (decoded.ok() != encoded.ok()) std::abort();
  if (!decoded.ok()) return;
  const EncodedRecord& e = encoded.value();
  const DelayedRecord& r = decoded.value();
  if (!(e.Decode() == r) || e.source_offset() != r.source_offset ||
      e.requested_deliver_at_ms() != r.requested_deliver_at_ms ||
      e.source_timestamp_ms() != r.source_timestamp_ms || e.SourceId() != r.SourceId()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Both decoders see every input: each must refuse the other's payloads, not misread them.
  ExpectRoundTrip(DecodeDelayedRecord(bytes), &EncodeDelayedRecord, &DecodeDelayedRecord);
  ExpectRoundTrip(DecodeStoredCancel(bytes), &EncodeStoredCancel, &DecodeStoredCancel);
  ExpectEncodedRecordAgrees(bytes);
  if (KindOfStoredPayload(bytes) == StoredPayloadKind::kCancel && DecodeDelayedRecord(bytes).ok()) {
    std::abort();
  }
  return 0;
}
