// TestConsumer: the tests' reader of TestRecords, in a group of its own, stamping each record
// with the time it arrived. It reads assigned partitions from the beginning without group
// management (AssignFromBeginning: a broker outage cannot make it re-read), or subscribes.
//
// Thread-safety: one thread at a time.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tests/support/kafka_config.h"
#include "tests/support/test_record.h"

namespace delaybridge::testing {

class TestConsumer {
 public:
  // extra_config is applied after the defaults (e.g. isolation.level, SASL settings); the
  // default isolation level, read_committed, hides aborted transactions.
  static Result<std::unique_ptr<TestConsumer>> Create(const std::string& bootstrap,
                                                      const std::string& group_id,
                                                      const KafkaConfig& extra_config = {});
  ~TestConsumer();

  Status Subscribe(const std::vector<std::string>& topics);
  // Reads every partition of the topics (topic -> partition count) from the beginning.
  Status AssignFromBeginning(const std::map<std::string, int32_t>& partitions_by_topic);
  // Polls until done(records so far) returns true or the timeout passes; returns all records
  // received in this call. The timeout is not an error: callers check what they got.
  std::vector<TestRecord> ConsumeUntil(
      const std::function<bool(const std::vector<TestRecord>&)>& done,
      std::chrono::milliseconds timeout);
  // Polls for exactly `quiet`: the records that arrive in that window.
  std::vector<TestRecord> ConsumeFor(std::chrono::milliseconds quiet);
  Status CommitSync();
  RdKafka::KafkaConsumer& raw() { return *consumer_; }

 private:
  TestConsumer() = default;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
};

}  // namespace delaybridge::testing
