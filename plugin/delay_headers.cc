#include "plugin/delay_headers.h"

#include <charconv>
#include <limits>

namespace delaybridge::plugin {

namespace {

const HeaderView* LastHeader(std::span<const HeaderView> headers, std::string_view name) {
  const HeaderView* found = nullptr;
  for (const auto& h : headers) {
    if (h.name == name) found = &h;
  }
  return found;
}

std::string Shown(std::string_view value) {
  constexpr size_t kMaxShown = 64;  // keep the reason readable for a huge garbage value
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for "\"" + std::string(v).
  std::string shown;
  shown.push_back('"');
  shown.append(value.substr(0, kMaxShown));
  if (value.size() > kMaxShown) shown.append("...");
  shown.push_back('"');
  return shown;
}

// Parses a header value as a signed decimal int64: digits with an optional leading '-'.
// Returns the value or the reason it is not one.
std::variant<int64_t, std::string> ParseDecimal(const HeaderView& header) {
  const std::string name(header.name);
  if (!header.value) return name + ": null value, expected decimal milliseconds";
  const std::string_view text = *header.value;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return name + ": " + Shown(text) + " overflows a 64-bit millisecond count";
  }
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return name + ": " + Shown(text) + " is not a decimal integer";
  }
  return value;
}

// Resolves the requested delivery time, or the reason it is invalid. Everything is relative to
// the record's timestamp (now only for a record without one), so reading the record again after
// a failover gives the same answer (docs/bridge.md, "Kafka holds the truth"), and max_delay is
// measured the way the topic's retention is: from the record's timestamp.
std::variant<int64_t, std::string> ResolveDeliverAt(std::span<const HeaderView> headers,
                                                    std::optional<int64_t> record_timestamp_ms,
                                                    int64_t now_ms, int64_t max_delay_ms) {
  const int64_t base_ms = record_timestamp_ms.value_or(now_ms);
  if (const HeaderView* at = LastHeader(headers, kDeliverAtHeader)) {
    auto parsed = ParseDecimal(*at);
    if (auto* reason = std::get_if<std::string>(&parsed)) return *reason;
    const int64_t deliver_at_ms = std::get<int64_t>(parsed);
    if (deliver_at_ms < 0) return "x-deliver-at: negative epoch milliseconds " + Shown(*at->value);
    if (deliver_at_ms > base_ms && deliver_at_ms - base_ms > max_delay_ms) {
      return "x-deliver-at: " + std::to_string(deliver_at_ms) + " is " +
             std::to_string(deliver_at_ms - base_ms) +
             " ms after the record's timestamp, over max_delay " + std::to_string(max_delay_ms) +
             " ms";
    }
    return deliver_at_ms;
  }
  if (const HeaderView* delay = LastHeader(headers, kDelayHeader)) {
    auto parsed = ParseDecimal(*delay);
    if (auto* reason = std::get_if<std::string>(&parsed)) return *reason;
    const int64_t delay_ms = std::get<int64_t>(parsed);
    if (delay_ms < 0) return "x-delay: negative delay " + Shown(*delay->value);
    if (delay_ms > max_delay_ms) {
      return "x-delay: " + std::to_string(delay_ms) + " ms is over max_delay " +
             std::to_string(max_delay_ms) + " ms";
    }
    if (base_ms > std::numeric_limits<int64_t>::max() - delay_ms) {
      return "x-delay: timestamp " + std::to_string(base_ms) + " + " + std::to_string(delay_ms) +
             " ms overflows";
    }
    return base_ms + delay_ms;
  }
  return base_ms;  // no delay header: deliver now (when it was produced)
}

// Parses a non-negative decimal that fits an int32/int64 (T), the whole of text.
template <typename T>
std::optional<T> ParseNonNegative(std::string_view text) {
  T value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

bool IsDelayControlHeader(std::string_view name) {
  return name == kDelayHeader || name == kDeliverAtHeader || name == kTargetTopicHeader ||
         name == kDelayCancelHeader;
}

bool IsReservedHeader(std::string_view name) {
  return name == kDelaySourceHeader || name == kDelayErrorHeader ||
         name == kDelayOriginalBytesHeader;
}

DelayParse ParseDelayHeaders(std::span<const HeaderView> headers,
                             std::optional<int64_t> record_timestamp_ms, int64_t now_ms,
                             const std::string& default_target, const DelayPolicy& policy) {
  auto when = ResolveDeliverAt(headers, record_timestamp_ms, now_ms, policy.max_delay_ms);
  if (auto* reason = std::get_if<std::string>(&when)) return *reason;

  DelayRequest request;
  request.deliver_at_ms = std::get<int64_t>(when);
  request.target_topic = default_target;
  if (const HeaderView* target = LastHeader(headers, kTargetTopicHeader)) {
    if (!target->value) return std::string("x-target-topic: null value");
    const std::string topic(*target->value);
    if (!policy.allowed_targets->count(topic)) {
      return "x-target-topic: " + Shown(topic) + " is not in allowed_targets";
    }
    request.target_topic = topic;
  }
  return request;
}

std::optional<std::variant<int64_t, std::string>> ParseCancelHeader(
    std::span<const HeaderView> headers, const std::string& own_topic, int32_t own_partition,
    int64_t own_offset) {
  const HeaderView* cancel = LastHeader(headers, kDelayCancelHeader);
  if (!cancel) return std::nullopt;
  if (!cancel->value) return std::string("x-delay-cancel: null value");
  const std::string_view id = *cancel->value;
  // Topic names cannot hold '/', so the last two separate partition and offset.
  const size_t offset_at = id.rfind('/');
  const size_t partition_at = offset_at == std::string_view::npos || offset_at == 0
                                  ? std::string_view::npos
                                  : id.rfind('/', offset_at - 1);
  if (partition_at == std::string_view::npos) {
    return "x-delay-cancel: " + Shown(id) + " is not <topic>/<partition>/<offset>";
  }
  const std::string_view topic = id.substr(0, partition_at);
  const auto partition =
      ParseNonNegative<int32_t>(id.substr(partition_at + 1, offset_at - partition_at - 1));
  const auto offset = ParseNonNegative<int64_t>(id.substr(offset_at + 1));
  if (!partition || !offset) {
    return "x-delay-cancel: " + Shown(id) + " is not <topic>/<partition>/<offset>";
  }
  if (topic != own_topic || *partition != own_partition) {
    return "x-delay-cancel: " + Shown(id) + " names another partition than the cancel's own " +
           own_topic + "/" + std::to_string(own_partition) +
           " (a cancel must be produced to its target's partition)";
  }
  if (*offset >= own_offset) {
    return "x-delay-cancel: " + Shown(id) + " names an offset not before the cancel's own " +
           std::to_string(own_offset);
  }
  return *offset;
}

}  // namespace delaybridge::plugin
