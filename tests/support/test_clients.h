// Test clients: a producer that sends records with keys, headers and timestamps (and tells where
// each landed), and a group-less consumer that reads whole topics from the beginning (no 3 s
// group join on the mock cluster). Records are plain values, so tests compare them with ==.
//
// Thread-safety: each client has one owner thread.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

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
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<TestHeader> headers;

  // The value of the last header with this name; nullopt when absent or null.
  std::optional<std::string> Header(const std::string& name) const;
};

// Where the broker put a produced record: filled in by its delivery report, so it must outlive
// the Flush (or poll) that serves the report.
struct ProducedAt {
  int32_t partition = -1;
  int64_t offset = -1;  // -1 until acknowledged
};

class TestProducer {
 public:
  static Result<std::unique_ptr<TestProducer>> Create(const std::string& bootstrap);
  ~TestProducer();
  // Enqueues one record (waits while librdkafka's queue is full); *acked, when given, learns
  // where it landed once acknowledged.
  Status Produce(const TestRecord& record, ProducedAt* acked = nullptr);
  // Waits for every enqueued record; an error if any was not acknowledged.
  Status Flush(std::chrono::milliseconds timeout);

 private:
  class Reports : public RdKafka::DeliveryReportCb {
   public:
    void dr_cb(RdKafka::Message& message) override;
    int failures = 0;
    std::string last_error;
  };
  TestProducer() = default;
  Reports reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

class TestConsumer {
 public:
  // Reads partitions [0, partitions) of each topic from the beginning.
  static Result<std::unique_ptr<TestConsumer>> Create(
      const std::string& bootstrap, const std::vector<std::pair<std::string, int>>& topics);
  ~TestConsumer();

  // Returns what arrives within timeout (possibly nothing).
  std::vector<TestRecord> Poll(std::chrono::milliseconds timeout);
  // Polls into out until done(*out) is true or the deadline passes; returns done(*out).
  bool CollectUntil(std::vector<TestRecord>* out,
                    const std::function<bool(const std::vector<TestRecord>&)>& done,
                    std::chrono::milliseconds timeout);

 private:
  TestConsumer() = default;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
};

}  // namespace delaybridge::testing
