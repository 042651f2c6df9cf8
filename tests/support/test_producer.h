// TestProducer: the tests' idempotent acks=all producer of TestRecords, partitioning keys as a
// Java producer does (murmur2). Produce() enqueues, Flush() waits for every delivery report.
//
// Thread-safety: one thread at a time.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "tests/support/kafka_config.h"
#include "tests/support/test_record.h"

namespace delaybridge::testing {

class TestProducer {
 public:
  // extra_config is applied after the defaults (e.g. transactional.id, SASL settings).
  static Result<std::unique_ptr<TestProducer>> Create(const std::string& bootstrap,
                                                      const KafkaConfig& extra_config = {});

  // Enqueues one record, waiting while librdkafka's queue is full. *acked, when given, learns
  // where the record landed once acknowledged (by Flush, or a poll of raw()); it must outlive
  // that.
  Status Produce(const TestRecord& record, ProducedAt* acked = nullptr);
  // Waits until every enqueued record is acknowledged; fails if any delivery failed.
  Status Flush(std::chrono::milliseconds timeout);
  // For what the wrapper does not cover: polls, transactions.
  RdKafka::Producer& raw() { return *producer_; }

 private:
  class DeliveryReports : public RdKafka::DeliveryReportCb {
   public:
    void dr_cb(RdKafka::Message& message) override;
    int64_t failed = 0;
    std::string first_error;
  };
  TestProducer() = default;

  DeliveryReports reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
};

}  // namespace delaybridge::testing
