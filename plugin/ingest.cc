#include "plugin/ingest.h"

#include <array>
#include <span>
#include <vector>

namespace delaybridge::plugin {

IngestDecision DecideIngest(const IncomingRecord& in, const std::string& default_target,
                            const IngestPolicy& policy, int64_t now_ms) {
  // Views of the headers: on the stack for the few most records carry, so that reading them
  // allocates nothing; in a vector for more.
  constexpr size_t kViewsOnStack = 8;
  std::array<HeaderView, kViewsOnStack> on_stack;
  std::vector<HeaderView> on_heap(in.headers.size() > kViewsOnStack ? in.headers.size() : 0);
  const std::span<HeaderView> views =
      on_heap.empty() ? std::span(on_stack).first(in.headers.size()) : std::span(on_heap);
  for (size_t i = 0; i < in.headers.size(); ++i) {
    const KafkaHeader& h = in.headers[i];
    views[i] =
        HeaderView{h.name, h.value ? std::optional<std::string_view>(*h.value) : std::nullopt};
  }
  if (auto cancel = ParseCancelHeader(views, in.topic, in.partition, in.offset)) {
    if (auto* reason = std::get_if<std::string>(&*cancel)) return Rejected{*reason};
    return CancelRequested{StoredCancel{in.topic, in.partition, in.offset,
                                        std::get<int64_t>(*cancel), in.timestamp_ms.value_or(-1)}};
  }
  DelayParse parsed =
      ParseDelayHeaders(views, in.timestamp_ms, now_ms, default_target, policy.delay);
  if (auto* reason = std::get_if<std::string>(&parsed)) return Rejected{*reason};
  auto& request = std::get<DelayRequest>(parsed);

  // Encoded from the consumed record's own strings: no copy of key, value or headers first.
  std::string header_bytes;
  DelayedRecordView r;
  for (const auto& h : in.headers) {
    if (IsDelayControlHeader(h.name) || IsReservedHeader(h.name)) continue;
    AppendEncodedHeader(&header_bytes, h.name, h.value);
    ++r.header_count;
  }
  r.header_bytes = header_bytes;
  r.target_topic = request.target_topic;
  r.key = in.key;
  r.value = in.value;
  r.source_topic = in.topic;
  r.source_partition = in.partition;
  r.source_offset = in.offset;
  r.source_timestamp_ms = in.timestamp_ms.value_or(-1);
  r.requested_deliver_at_ms = request.deliver_at_ms;
  EncodedRecord encoded = EncodedRecord::Encode(r);
  if (encoded.bytes().size() > policy.max_record_bytes) {
    return Rejected{"record: " + std::to_string(encoded.bytes().size()) +
                    " bytes stored, over max_record_bytes " +
                    std::to_string(policy.max_record_bytes)};
  }
  return Accepted{std::move(encoded)};
}

}  // namespace delaybridge::plugin
