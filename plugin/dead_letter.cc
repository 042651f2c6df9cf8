#include "plugin/dead_letter.h"

#include <algorithm>

#include "plugin/delay_headers.h"

namespace delaybridge::plugin {

namespace {

std::string ErrorOf(const DelayedRecord& record) {
  for (const KafkaHeader& h : record.headers) {
    if (h.name == kDelayErrorHeader && h.value) return *h.value;
  }
  return std::string();
}

}  // namespace

DelayedRecord MakeDeadLetter(const IncomingRecord& in, const std::string& reason,
                             const std::string& dead_letter_topic) {
  DelayedRecord r;
  r.target_topic = dead_letter_topic;
  r.key = in.key;
  r.value = in.value;
  r.headers = StripReservedHeaders(in.headers);
  r.headers.push_back(KafkaHeader{std::string(kDelayErrorHeader), reason});
  r.source_topic = in.topic;
  r.source_partition = in.partition;
  r.source_offset = in.offset;
  r.source_timestamp_ms = in.timestamp_ms.value_or(-1);
  return r;
}

DelayedRecord DeadLetterOfDelivery(const DelayedRecord& record, const std::string& reason,
                                   const std::string& dead_letter_topic) {
  DelayedRecord r = record;
  r.target_topic = dead_letter_topic;
  r.headers.push_back(KafkaHeader{std::string(kDelayErrorHeader), reason});
  return r;
}

DelayedRecord ReduceDeadLetter(const DelayedRecord& letter, const std::string& reason) {
  DelayedRecord r;
  r.target_topic = letter.target_topic;
  if (letter.key && letter.key->size() <= kReducedKeyMaxBytes) r.key = letter.key;
  const std::string first = ErrorOf(letter);
  r.headers.push_back(KafkaHeader{
      std::string(kDelayErrorHeader),
      (first.empty() ? std::string() : first + "; ") + reason + "; value and headers dropped"});
  r.headers.push_back(KafkaHeader{std::string(kDelayOriginalBytesHeader),
                                  std::to_string(RecordPayloadBytes(letter))});
  r.source_topic = letter.source_topic;
  r.source_partition = letter.source_partition;
  r.source_offset = letter.source_offset;
  r.source_timestamp_ms = letter.source_timestamp_ms;
  r.requested_deliver_at_ms = letter.requested_deliver_at_ms;
  return r;
}

size_t RecordPayloadBytes(const DelayedRecord& record) {
  size_t bytes = (record.key ? record.key->size() : 0) + (record.value ? record.value->size() : 0);
  for (const KafkaHeader& h : record.headers) {
    if (!IsReservedHeader(h.name)) bytes += h.name.size() + (h.value ? h.value->size() : 0);
  }
  return bytes;
}

std::vector<KafkaHeader> StripReservedHeaders(std::vector<KafkaHeader> headers) {
  std::erase_if(headers, [](const KafkaHeader& h) { return IsReservedHeader(h.name); });
  return headers;
}

}  // namespace delaybridge::plugin
