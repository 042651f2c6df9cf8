// Kafka client helpers for the end-to-end tests against a real Apache Kafka broker: the broker
// address from the environment, unique topic names, topic creation with the admin API, and thin
// producer/consumer wrappers that collect whole records (key, value, headers, timestamp).
//
// Thread-safety: a TestProducer or TestConsumer is used by one thread at a time; the free
// functions are thread-safe.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tests/support/test_clients.h"  // ProducedAt

namespace delaybridge::e2e {

// The environment variable CTest sets (from the kafka fixture) to the broker's host:port.
inline constexpr const char* kBootstrapEnv = "DELAYBRIDGE_TEST_BOOTSTRAP";

// The broker address from DELAYBRIDGE_TEST_BOOTSTRAP, or an error saying how to get one.
Result<std::string> BootstrapFromEnv();

// A name no earlier run used: prefix, pid and a nanosecond clock reading.
std::string UniqueName(std::string_view prefix);

struct TopicSpec {
  std::string name;
  int partitions = 1;
  std::map<std::string, std::string> configs = {};  // topic configs, e.g. retention.ms
};

// Creates the topics (replication factor 1) and waits until the broker's metadata lists every
// one of them with all its partitions led.
Status CreateTopics(const std::string& bootstrap, const std::vector<TopicSpec>& topics);

// Kafka headers in arrival order; values are bytes, null values are std::nullopt.
using Headers = std::vector<std::pair<std::string, std::optional<std::string>>>;

// The first value of a header, if present and not null.
std::optional<std::string> HeaderValue(const Headers& headers, std::string_view name);

struct OutgoingRecord {
  std::string topic;
  int32_t partition = RdKafka::Topic::PARTITION_UA;  // unassigned: the producer's partitioner
  std::optional<std::string> key = std::nullopt;
  std::string value = {};
  Headers headers = {};
  int64_t timestamp_ms = 0;  // 0: the producer's current time
};

// An idempotent acks=all producer; Produce() enqueues, Flush() waits for every delivery report.
class TestProducer {
 public:
  // extra_config is applied after the defaults (e.g. transactional.id).
  static Result<std::unique_ptr<TestProducer>> Create(
      const std::string& bootstrap, const std::map<std::string, std::string>& extra_config = {});

  // *acked, when given, learns where the record landed once acknowledged (by Flush, or a poll of
  // raw()); it must outlive that.
  Status Produce(const OutgoingRecord& record, testing::ProducedAt* acked = nullptr);
  // Waits until every enqueued record is acknowledged; fails if any delivery failed.
  Status Flush(std::chrono::milliseconds timeout);
  RdKafka::Producer& raw() { return *producer_; }

 private:
  class DeliveryCounter : public RdKafka::DeliveryReportCb {
   public:
    void dr_cb(RdKafka::Message& message) override;
    int64_t failed = 0;
    std::string first_error;
  };
  TestProducer() = default;

  DeliveryCounter delivery_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

struct ConsumedRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;
  std::string value;
  Headers headers;
  int64_t timestamp_ms = 0;
  // When this process received the record (epoch ms), for lateness measurements.
  int64_t received_at_ms = 0;
};

// A consumer in its own group reading topics from the beginning.
class TestConsumer {
 public:
  // isolation_level "read_committed" hides aborted transactions.
  static Result<std::unique_ptr<TestConsumer>> Create(
      const std::string& bootstrap, const std::string& group_id,
      const std::map<std::string, std::string>& extra_config = {});
  ~TestConsumer();

  Status Subscribe(const std::vector<std::string>& topics);
  // Reads every partition of the topics from the beginning without group management, so a
  // broker outage longer than the session timeout cannot make it re-read (no rebalance).
  Status AssignFromBeginning(const std::map<std::string, int32_t>& partitions_by_topic);
  // Polls until done(records so far) returns true or the timeout passes; returns all records
  // received in this call. The timeout is not an error: callers check what they got.
  std::vector<ConsumedRecord> ConsumeUntil(
      const std::function<bool(const std::vector<ConsumedRecord>&)>& done,
      std::chrono::milliseconds timeout);
  // Polls for exactly `quiet`: records that arrive in that window (none are expected).
  std::vector<ConsumedRecord> ConsumeFor(std::chrono::milliseconds quiet);
  Status CommitSync();
  RdKafka::KafkaConsumer& raw() { return *consumer_; }

 private:
  TestConsumer() = default;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
};

// Epoch milliseconds from the system clock.
int64_t NowMs();

}  // namespace delaybridge::e2e
