// Delay headers: turns the producer-side headers of a record in a delay topic into the time it
// must be delivered and the topic it goes to, or into the reason it cannot be accepted (the
// reason becomes the dead-letter record's x-delay-error header).
//
//   x-delay: <decimal ms>          delay counted from the record's Kafka timestamp
//                                  (from now when the record has no timestamp)
//   x-deliver-at: <decimal epoch ms>  absolute time; wins when both are present
//   x-target-topic: <topic>        destination; must be listed in allowed_targets
//   x-delay-cancel: <topic>/<partition>/<offset>
//                                  not a record to deliver but a cancel of the pending record
//                                  with that id (its x-delay-source), in the same partition
//
// No header means "deliver now"; a time in the past means "deliver now". When a header appears
// more than once the last one counts (as Java's Headers.lastHeader()).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace delaybridge::plugin {

inline constexpr std::string_view kDelayHeader = "x-delay";
inline constexpr std::string_view kDeliverAtHeader = "x-deliver-at";
inline constexpr std::string_view kTargetTopicHeader = "x-target-topic";
inline constexpr std::string_view kDelayCancelHeader = "x-delay-cancel";
inline constexpr std::string_view kDelayErrorHeader = "x-delay-error";
inline constexpr std::string_view kDelaySourceHeader = "x-delay-source";
inline constexpr std::string_view kDelayOriginalBytesHeader = "x-delay-original-bytes";

// True for the four headers the bridge consumes (they are not passed on to the target).
bool IsDelayControlHeader(std::string_view name);

// True for the headers only the bridge sets (x-delay-source, x-delay-error,
// x-delay-original-bytes): a producer's own are dropped, so a consumer that de-duplicates on
// x-delay-source or trusts x-delay-error cannot be misled by another producer's record.
bool IsReservedHeader(std::string_view name);

struct HeaderView {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a header with a null value
};

struct DelayPolicy {
  int64_t max_delay_ms = 0;
  const std::set<std::string>* allowed_targets = nullptr;  // never null when parsing
};

struct DelayRequest {
  // The time the headers ask for, as asked: it may be in the past (a record that waited in the
  // delay topic). The store delivers it no earlier than it was stored; lateness is measured
  // from this time, so a consumer that falls behind shows up as lateness.
  int64_t deliver_at_ms = 0;
  std::string target_topic;
};

// Either the accepted request or the reason for rejecting it.
using DelayParse = std::variant<DelayRequest, std::string>;

// record_timestamp_ms: the record's Kafka timestamp, nullopt when it has none.
// default_target: the route's target topic, used without x-target-topic.
DelayParse ParseDelayHeaders(std::span<const HeaderView> headers,
                             std::optional<int64_t> record_timestamp_ms, int64_t now_ms,
                             const std::string& default_target, const DelayPolicy& policy);

// The offset of the record an x-delay-cancel header names (the last one counts), or the reason
// the cancel is refused: an id that does not parse, names another topic or partition than the
// cancel's own (own_topic, own_partition), or an offset not below the cancel's own (a cancel
// always follows its target). nullopt: the record is not a cancel.
std::optional<std::variant<int64_t, std::string>> ParseCancelHeader(
    std::span<const HeaderView> headers, const std::string& own_topic, int32_t own_partition,
    int64_t own_offset);

}  // namespace delaybridge::plugin
