#include "plugin/dead_letter.h"

#include "plugin/delay_headers.h"

namespace delaybridge::plugin {

DelayedRecord MakeDeadLetter(const IncomingRecord& in, const std::string& reason,
                             const std::string& dead_letter_topic) {
  DelayedRecord r;
  r.target_topic = dead_letter_topic;
  r.key = in.key;
  r.value = in.value;
  r.headers = in.headers;
  r.headers.push_back(RecordHeader{std::string(kDelayErrorHeader), reason});
  r.source_topic = in.topic;
  r.source_partition = in.partition;
  r.source_offset = in.offset;
  r.source_timestamp_ms = in.timestamp_ms.value_or(-1);
  return r;
}

}  // namespace delaybridge::plugin
