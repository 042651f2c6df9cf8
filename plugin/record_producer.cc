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

RecordProducer::~RecordProducer() {
  for (const auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic);
}

Result<std::unique_ptr<RecordProducer>> RecordProducer::Create(
    const std::map<std::string, std::string>& kafka, Logger& logger, AckHandler on_ack,
    KafkaStatsFile* stats, const ProducerTransactions& transactions) {
  std::unique_ptr<RecordProducer> p(new RecordProducer(logger, std::move(on_ack), stats));
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string errstr;
  // The kafka map may override every default.
  // - linger.ms 5 (librdkafka's default, set so it is seen): a shorter linger sends more and
  //   smaller requests, and a partition whose records have lingered while its request is in
  //   flight wakes the broker thread in vain until the answer comes (below). Against 1 ms, 5 ms
  //   costs 2-3 ms of median lateness and saves about a fifth of the bridge's CPU at 2k-25k
  //   rec/s, with a p99 no worse (docs/BENCHMARKS.md, "The producer's linger").
  // - max.in.flight 1: librdkafka's idempotent producer (2.0.2 to at least 2.12.1) busy-loops
  //   its broker thread while a partition with records past their linger waits for its
  //   in-flight request and no other request is queued. A slow broker then costs the bridge a
  //   whole core, and a broker on the same machine is starved further (a 50 ms GC pause became
  //   5 s of silence). With one request per connection a second partition's request is
  //   queued behind it, so the thread sleeps on the socket; batches grow while it waits. Records
  //   that all go to one partition still spin it while the broker stalls (docs/BENCHMARKS.md).
  //   Measured in docs/BENCHMARKS.md (p99 lateness at 75k rec/s: 1,008 -> 47 ms).
  // - queue.buffering.max.messages 50000 (librdkafka's is 100000): the queue keeps a copy of
  //   each record produced and not yet acknowledged, beside the records the preloader holds
  //   (wheel.max_preloaded_records), so this bounds what a drain holds at once. Draining 500,000
  //   records due at once, the bridge peaked at 250 and 256 MB with 100000 (two runs) and at
  //   216 MB with 50000 (one run), at 1.9-2.2x the pipe's rate; a full queue puts the due
  //   records back cheaply (Deliverer::ProduceDue). docs/BENCHMARKS.md, "Draining a backlog".
  const std::pair<const char*, const char*> kDefaults[] = {
      {"linger.ms", "5"}, {"max.in.flight", "1"}, {"queue.buffering.max.messages", "50000"}};
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
  served_.push_back(ProducerAck{reinterpret_cast<uint64_t>(message.msg_opaque()), message.err()});
}

void RecordProducer::DeliveryReports::HandOver() {
  if (served_.empty()) return;
  // The handler may call the producer again (a flush), which serves and hands over reports of
  // its own, so the batch leaves served_ before the handler sees it.
  std::vector<ProducerAck> batch;
  batch.swap(served_);
  on_ack_(batch);
  batch.clear();
  if (served_.empty()) served_.swap(batch);  // its buffer, for the next call's reports
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

rd_kafka_topic_t* RecordProducer::Topic(std::string_view name) {
  if (auto it = topics_.find(name); it != topics_.end()) return it->second;
  const std::string key(name);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_->c_ptr(), key.c_str(), nullptr);
  if (topic) topics_.emplace(key, topic);
  return topic;
}

RdKafka::ErrorCode RecordProducer::Produce(const DelayedRecordView& record, int64_t timestamp_ms,
                                           uint64_t token) {
  // By handle: a record produced by topic name looks its topic up under the client's write lock,
  // which waits for every librdkafka thread reading it.
  rd_kafka_topic_t* topic = Topic(record.target_topic);
  if (!topic) return static_cast<RdKafka::ErrorCode>(rd_kafka_last_error());  // an invalid name
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.header_count + 1);
  record.ForEachHeader(
      [headers](std::string_view name, const std::optional<std::string_view>& value) {
        rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()),
                            value ? value->data() : nullptr,
                            value ? static_cast<ssize_t>(value->size()) : 0);
      });
  const std::string source_id = record.SourceId();
  rd_kafka_header_add(headers, kDelaySourceHeader.data(),
                      static_cast<ssize_t>(kDelaySourceHeader.size()), source_id.data(),
                      static_cast<ssize_t>(source_id.size()));
  // Null (nullptr) and empty are different values and keys.
  void* value = record.value ? const_cast<char*>(record.value->data()) : nullptr;
  const size_t value_size = record.value ? record.value->size() : 0;
  const void* key = record.key ? record.key->data() : nullptr;
  const size_t key_size = record.key ? record.key->size() : 0;
  void* opaque = reinterpret_cast<void*>(token);
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_->c_ptr(), RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(value, value_size),
      RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_TIMESTAMP(timestamp_ms),
      RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);  // passed on success
  return static_cast<RdKafka::ErrorCode>(err);
}

int RecordProducer::Poll() {
  const int served = producer_->poll(0);
  reports_.HandOver();
  return served;
}

RdKafka::ErrorCode RecordProducer::Flush(int timeout_ms) {
  const RdKafka::ErrorCode err = producer_->flush(timeout_ms);
  reports_.HandOver();
  return err;
}

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
  Status committed;
  if (!offsets.empty()) {
    PartitionList list(offsets);
    committed = with_retries("send offsets to transaction", [&] {
      return rd_kafka_send_offsets_to_transaction(producer_->c_ptr(), list.get(), group,
                                                  remaining_ms());
    });
  }
  if (committed.ok()) {
    committed = with_retries("commit transaction", [&] {
      return rd_kafka_commit_transaction(producer_->c_ptr(), remaining_ms());
    });
  }
  reports_.HandOver();  // the commit flushes the transaction's records
  return committed;
}

Status RecordProducer::AbortTransaction(int timeout_ms) {
  TransactionError error(rd_kafka_abort_transaction(producer_->c_ptr(), timeout_ms));
  reports_.HandOver();  // the records the abort purged
  return error.ToStatus("abort transaction");
}

Result<std::unique_ptr<KafkaWakeup>> RecordProducer::MakeWakeup(boost::asio::io_context& io) {
  return KafkaWakeup::Create(io, rd_kafka_queue_get_main(producer_->c_ptr()));
}

}  // namespace delaybridge::plugin
