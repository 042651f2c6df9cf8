// RecordProducer: the bridge's idempotent producer (enable.idempotence=true, acks=all,
// partitioner=murmur2_random so a key lands in the partition a Java client picks). It
// produces DelayedRecords to their target_topic with key, value and headers kept plus
// x-delay-source: <topic>/<partition>/<offset>, and reports each broker acknowledgement (or
// final failure) through an AckHandler with the caller's 64-bit token. The reports a call serves
// are handed over together when it returns, in the order librdkafka served them: the handler
// reaches records acknowledged milliseconds after they were produced, out of the cache, and
// with the whole batch in view it can fetch the records ahead of the one it settles.
//
// With a transactional id (exactly_once) it is also a transactional producer (KIP-98): records
// produced between BeginTransaction and CommitTransaction become visible to read_committed
// consumers together with the consumer offsets committed in the same transaction, or not at all.
//
// Thread-safety: one owner thread calls Produce/Poll/Flush and the transaction methods;
// acknowledgements are delivered on that thread at the end of Poll/Flush and the transaction
// methods.
// librdkafka's own threads stay inside librdkafka.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "plugin/delayed_record.h"
#include "plugin/kafka_event_logger.h"
#include "plugin/kafka_wakeup.h"
#include "plugin/log.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

// How a producer is transactional; an empty id: it is not.
struct ProducerTransactions {
  std::string transactional_id;
  int timeout_ms = 10'000;  // transaction.timeout.ms: the broker aborts one open longer
};

// True when producing the same record again cannot succeed: the target refuses this record
// (too large, invalid, against its policy) or cannot be written at all (unknown to the cluster
// after librdkafka's metadata wait, an invalid name, not authorized). Anything else (a broker
// away, a leader moving, a timeout) may pass.
bool IsPermanentProduceError(RdKafka::ErrorCode err);

// One delivery report: err is ERR_NO_ERROR when the broker acknowledged the record.
struct ProducerAck {
  uint64_t token = 0;
  RdKafka::ErrorCode err = RdKafka::ERR_NO_ERROR;
};

class RecordProducer {
 public:
  // The reports one call served, in the order served; never called with none.
  using AckHandler = std::function<void(std::span<const ProducerAck> acks)>;

  // kafka: the user's librdkafka properties (bootstrap.servers resolved). stats, if not null,
  // receives librdkafka's statistics.
  static Result<std::unique_ptr<RecordProducer>> Create(
      const std::map<std::string, std::string>& kafka, Logger& logger, AckHandler on_ack,
      KafkaStatsFile* stats = nullptr, const ProducerTransactions& transactions = {});
  ~RecordProducer();

  // Enqueues the record with timestamp_ms as its Kafka timestamp. Returns ERR_NO_ERROR or
  // the immediate failure (ERR__QUEUE_FULL: retry after Poll()).
  RdKafka::ErrorCode Produce(const DelayedRecordView& record, int64_t timestamp_ms, uint64_t token);

  // Serves delivery reports (then calls the AckHandler); returns how many events were served.
  int Poll();
  // Waits up to timeout_ms for every enqueued record to be acknowledged or failed.
  RdKafka::ErrorCode Flush(int timeout_ms);
  int in_flight() const { return producer_->outq_len(); }
  bool fatal() const { return events_.fatal(); }

  // Transactions (only with a transactional id). InitTransactions once before anything else: it
  // fences a previous incarnation with the same id and aborts what it left open.
  Status InitTransactions(int timeout_ms);
  Status BeginTransaction();
  // Sends offsets (with the group's metadata, for fencing) into the open transaction and commits
  // it, retrying what librdkafka calls retriable for up to timeout_ms. Errors: Unavailable when
  // the transaction must be aborted (AbortTransaction) and another can begin, FailedPrecondition
  // when the producer cannot go on (fenced, fatal).
  Status CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                           const rd_kafka_consumer_group_metadata_t* group, int timeout_ms);
  Status AbortTransaction(int timeout_ms);

  // Wakes on_wake on the io_context thread when delivery reports are waiting; see KafkaWakeup.
  Result<std::unique_ptr<KafkaWakeup>> MakeWakeup(boost::asio::io_context& io);

 private:
  // Collects the reports librdkafka serves inside a call; HandOver passes them on after it.
  class DeliveryReports : public RdKafka::DeliveryReportCb {
   public:
    explicit DeliveryReports(AckHandler on_ack) : on_ack_(std::move(on_ack)) {}
    void dr_cb(RdKafka::Message& message) override;
    void HandOver();

   private:
    AckHandler on_ack_;
    std::vector<ProducerAck> served_;
  };

  RecordProducer(Logger& logger, AckHandler on_ack, KafkaStatsFile* stats);
  // The handle of a target topic, made on first use and kept; nullptr for a name librdkafka
  // refuses (rd_kafka_last_error says why).
  rd_kafka_topic_t* Topic(std::string_view name);

  // Looked up by a std::string_view of the name, without a copy.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  KafkaEventLogger events_;
  DeliveryReports reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::unordered_map<std::string, rd_kafka_topic_t*, NameHash, std::equal_to<>> topics_;
};

}  // namespace delaybridge::plugin
