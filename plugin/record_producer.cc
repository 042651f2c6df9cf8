#include "plugin/record_producer.h"

#include <chrono>
#include <thread>

#include "plugin/delay_headers.h"
#include "plugin/partition_list.h"

namespace delaybridge::plugin {

namespace {

constexpr int kTransactionRetryBackoffMs = 100;

// Takes ownership of a librdkafka error (null: success).
class TransactionError {
 public:
  explicit TransactionError(rd_kafka_error_t* error) : error_(error) {}
  ~TransactionError() {
    if (error_) rd_kafka_error_destroy(error_);
  }
  TransactionError(const TransactionError&) = delete;
  TransactionError& operator=(const TransactionError&) = delete;

  bool ok() const { return error_ == nullptr; }
  bool retriable() const { return error_ && rd_kafka_error_is_retriable(error_); }
  bool requires_abort() const { return error_ && rd_kafka_error_txn_requires_abort(error_); }
  // FailedPrecondition when the producer cannot go on (fenced, fatal); Unavailable when the
  // transaction can be aborted and another begun.
  Status ToStatus(const std::string& what) const {
    if (!error_) return Status::Ok();
    const std::string message = what + ": " + rd_kafka_error_string(error_);
    if (rd_kafka_error_is_fatal(error_)) return Status::FailedPrecondition(message + " (fatal)");
    return Status::Unavailable(message);
  }

 private:
  rd_kafka_error_t* error_;
};

}  // namespace

RecordProducer::RecordProducer(Logger& logger, AckHandler on_ack, KafkaStatsFile* stats)
    : events_(logger, "producer", stats), reports_(std::move(on_ack)) {}

RecordProducer::~RecordProducer() = default;

Result<std::unique_ptr<RecordProducer>> RecordProducer::Create(
    const std::map<std::string, std::string>& kafka, Logger& logger, AckHandler on_ack,
    KafkaStatsFile* stats, const ProducerTransactions& transactions) {
  std::unique_ptr<RecordProducer> p(new RecordProducer(logger, std::move(on_ack), stats));
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string errstr;
  // The kafka map may override both defaults.
  // - linger.ms 1: due records go out one by one as they fall due, so librdkafka's default 5 ms
  //   linger is pure lateness; 1 ms still batches a burst of records due together (measured
  //   with delaybridge-load at 2k rec/s: p50 8 -> 2 ms, p99 229 -> 87 ms).
  // - max.in.flight 1: librdkafka's idempotent producer (2.0.2 to at least 2.12.1) busy-loops
  //   its broker thread while a partition with records past their linger waits for its
  //   in-flight request and no other request is queued. A slow broker then costs the bridge a
  //   whole core, and a broker on the same machine is starved further (a 50 ms GC pause became
  //   5 s of silence). With one request per connection a second partition's request is always
  //   queued behind it, so the thread sleeps on the socket; batches grow while it waits.
  //   Measured in docs/BENCHMARKS.md (p99 lateness at 75k rec/s: 1,008 -> 47 ms).
  const std::pair<const char*, const char*> kDefaults[] = {{"linger.ms", "1"},
                                                           {"max.in.flight", "1"}};
  for (const auto& [key, value] : kDefaults) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(std::string("producer: ") + key + ": " + errstr);
    }
  }
  for (const auto& [key, value] : kafka) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("producer property " + key + ": " + errstr);
    }
  }
  // The bridge's guarantees: no duplicates from internal retries, nothing acknowledged
  // before every in-sync replica has it, Java-compatible key partitioning.
  const std::pair<const char*, const char*> kOwned[] = {
      {"enable.idempotence", "true"}, {"acks", "all"}, {"partitioner", "murmur2_random"}};
  for (const auto& [key, value] : kOwned) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(std::string("producer property ") + key + ": " + errstr);
    }
  }
  if (!transactions.transactional_id.empty()) {
    const std::pair<std::string, std::string> kTransactional[] = {
        {"transactional.id", transactions.transactional_id},
        {"transaction.timeout.ms", std::to_string(transactions.timeout_ms)}};
    for (const auto& [key, value] : kTransactional) {
      if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
        return Status::InvalidArgument("producer property " + key + ": " + errstr);
      }
    }
  }
  if (conf->set("event_cb", &p->events_, errstr) != RdKafka::Conf::CONF_OK ||
      conf->set("dr_cb", &p->reports_, errstr) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("producer callbacks: " + errstr);
  }
  p->producer_.reset(RdKafka::Producer::create(conf.get(), errstr));
  if (!p->producer_) return Status::InvalidArgument("create producer: " + errstr);
  return p;
}

void RecordProducer::DeliveryReports::dr_cb(RdKafka::Message& message) {
  on_ack_(reinterpret_cast<uint64_t>(message.msg_opaque()), message.err());
}

bool IsPermanentProduceError(RdKafka::ErrorCode err) {
  switch (err) {
    case RdKafka::ERR_MSG_SIZE_TOO_LARGE:
    case RdKafka::ERR_RECORD_LIST_TOO_LARGE:
    case RdKafka::ERR_INVALID_RECORD:
    case RdKafka::ERR_INVALID_TIMESTAMP:
    case RdKafka::ERR_POLICY_VIOLATION:
    case RdKafka::ERR__UNKNOWN_TOPIC:
    case RdKafka::ERR__UNKNOWN_PARTITION:
    case RdKafka::ERR_TOPIC_EXCEPTION:
    case RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED:
      return true;
    default:
      return false;
  }
}

RdKafka::ErrorCode RecordProducer::Produce(const DelayedRecordView& record, int64_t timestamp_ms,
                                           uint64_t token) {
  RdKafka::Headers* headers = RdKafka::Headers::create();
  record.ForEachHeader(
      [headers](std::string_view name, const std::optional<std::string_view>& value) {
        headers->add(std::string(name), value ? value->data() : nullptr, value ? value->size() : 0);
      });
  headers->add(std::string(kDelaySourceHeader), record.SourceId());
  const std::optional<std::string_view>& value = record.value;
  const std::optional<std::string_view>& key = record.key;
  const RdKafka::ErrorCode err = producer_->produce(
      std::string(record.target_topic), RdKafka::Topic::PARTITION_UA,
      RdKafka::Producer::RK_MSG_COPY, value ? const_cast<char*>(value->data()) : nullptr,
      value ? value->size() : 0, key ? key->data() : nullptr, key ? key->size() : 0, timestamp_ms,
      headers, reinterpret_cast<void*>(token));
  if (err != RdKafka::ERR_NO_ERROR) delete headers;  // ownership passes only on success
  return err;
}

int RecordProducer::Poll() { return producer_->poll(0); }

RdKafka::ErrorCode RecordProducer::Flush(int timeout_ms) { return producer_->flush(timeout_ms); }

Status RecordProducer::InitTransactions(int timeout_ms) {
  TransactionError error(rd_kafka_init_transactions(producer_->c_ptr(), timeout_ms));
  return error.ToStatus("init transactions");
}

Status RecordProducer::BeginTransaction() {
  TransactionError error(rd_kafka_begin_transaction(producer_->c_ptr()));
  return error.ToStatus("begin transaction");
}

Status RecordProducer::CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                                         const rd_kafka_consumer_group_metadata_t* group,
                                         int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto remaining_ms = [deadline] {
    return static_cast<int>(std::max<int64_t>(
        1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now())
               .count()));
  };
  // Both calls may be repeated after a retriable error (a broker away, a coordinator moving).
  const auto with_retries = [&](const std::string& what, auto call) -> Status {
    while (true) {
      TransactionError error(call());
      if (error.ok()) return Status::Ok();
      if (!error.retriable() || std::chrono::steady_clock::now() >= deadline) {
        return error.ToStatus(what);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kTransactionRetryBackoffMs));
    }
  };
  if (!offsets.empty()) {
    PartitionList list(offsets);
    Status sent = with_retries("send offsets to transaction", [&] {
      return rd_kafka_send_offsets_to_transaction(producer_->c_ptr(), list.get(), group,
                                                  remaining_ms());
    });
    if (!sent.ok()) return sent;
  }
  return with_retries("commit transaction", [&] {
    return rd_kafka_commit_transaction(producer_->c_ptr(), remaining_ms());
  });
}

Status RecordProducer::AbortTransaction(int timeout_ms) {
  TransactionError error(rd_kafka_abort_transaction(producer_->c_ptr(), timeout_ms));
  return error.ToStatus("abort transaction");
}

Result<std::unique_ptr<KafkaWakeup>> RecordProducer::MakeWakeup(boost::asio::io_context& io) {
  return KafkaWakeup::Create(io, rd_kafka_queue_get_main(producer_->c_ptr()));
}

}  // namespace delaybridge::plugin
