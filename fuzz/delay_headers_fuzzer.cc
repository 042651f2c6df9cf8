// Fuzzes the delay-header parser and the whole ingest decision on arbitrary header names and
// values: every input is accepted, a cancel of an earlier record of its partition, or rejected
// with a reason, never a crash; an accepted record's encoding decodes to the consumed record
// without its delay and reserved headers, and a cancel's to the same cancel.
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "plugin/delay_headers.h"
#include "plugin/delayed_record.h"
#include "plugin/ingest.h"

namespace {

const std::set<std::string> kAllowed = {"delivered", "orders"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delaybridge::plugin;
  delaybridge::fuzz::FuzzInput input(data, size);
  IncomingRecord in;
  in.topic = "delayed";
  in.offset = 7000;
  if (input.Byte() & 1) in.timestamp_ms = 1'800'000'000'000;
  const int header_count = input.Byte() % 8;
  for (int i = 0; i < header_count; ++i) {
    KafkaHeader header;
    header.name = std::string(input.Piece());
    if (input.Byte() & 1) header.value = std::string(input.Piece());
    in.headers.push_back(std::move(header));
  }
  in.value = std::string(input.Rest());
  const IngestPolicy policy{DelayPolicy{3'650LL * 86'400'000, &kAllowed}, 1 << 20};
  const IngestDecision decision = DecideIngest(in, "delivered", policy, 1'800'000'000'000);
  if (const auto* accepted = std::get_if<Accepted>(&decision)) {
    // The encoding decodes to the consumed record without its delay and reserved headers.
    auto decoded = DecodeDelayedRecord(accepted->encoded.bytes());
    if (!decoded.ok()) std::abort();
    std::vector<KafkaHeader> kept;
    for (const KafkaHeader& h : in.headers) {
      if (!IsDelayControlHeader(h.name) && !IsReservedHeader(h.name)) kept.push_back(h);
    }
    if (decoded->key != in.key || decoded->value != in.value || decoded->headers != kept ||
        decoded->source_topic != in.topic || decoded->source_partition != in.partition ||
        decoded->source_offset != in.offset ||
        decoded->source_timestamp_ms != in.timestamp_ms.value_or(-1) ||
        decoded->requested_deliver_at_ms != accepted->encoded.requested_deliver_at_ms()) {
      std::abort();
    }
    if (kAllowed.count(decoded->target_topic) == 0) std::abort();
  } else if (const auto* cancel = std::get_if<CancelRequested>(&decision)) {
    // A cancel names an earlier record of its own partition, and is stored as it decodes.
    const StoredCancel& c = cancel->cancel;
    if (c.target_offset < 0 || c.target_offset >= in.offset || c.cancel_offset != in.offset ||
        c.source_topic != in.topic || c.source_partition != in.partition) {
      std::abort();
    }
    auto decoded = DecodeStoredCancel(EncodeStoredCancel(c));
    if (!decoded.ok() || !(*decoded == c)) std::abort();
  } else if (std::get<Rejected>(decision).reason.empty()) {
    std::abort();  // every rejection says why
  }
  return 0;
}
