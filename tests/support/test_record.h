// TestRecord: a Kafka record as the tests produce and consume it (topic, partition, offset, key,
// value, headers, timestamp), the one vocabulary of the mock-cluster and real-broker tests. Keys,
// values and header values are bytes; a null one is std::nullopt (a tombstone has no value).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace delaybridge::testing {

struct TestHeader {
  std::string name;
  std::optional<std::string> value;
  bool operator==(const TestHeader&) const = default;
};

struct TestRecord {
  std::string topic;
  int32_t partition = -1;    // producing: -1 lets the partitioner choose
  int64_t offset = -1;       // filled in when consumed
  int64_t timestamp_ms = 0;  // producing: 0 means "now"
  std::optional<std::string> key = std::nullopt;
  std::optional<std::string> value = std::nullopt;
  std::vector<TestHeader> headers = {};
  // Consumed: when this process received it (epoch ms), for lateness at the consumer.
  int64_t received_at_ms = 0;

  // The value of the last header with this name; nullopt when absent or null.
  std::optional<std::string> Header(const std::string& name) const {
    std::optional<std::string> found;
    for (const TestHeader& header : headers) {
      if (header.name == name) found = header.value;
    }
    return found;
  }
};

// Where the broker put a produced record: filled in by its delivery report, so it must outlive
// the Flush (or poll) that serves the report.
struct ProducedAt {
  int32_t partition = -1;
  int64_t offset = -1;  // -1 until acknowledged
};

}  // namespace delaybridge::testing
