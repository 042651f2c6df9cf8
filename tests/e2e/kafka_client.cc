#include "tests/e2e/kafka_client.h"

#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

namespace delaybridge::e2e {
namespace {

using Config = std::map<std::string, std::string>;

Result<std::unique_ptr<RdKafka::Conf>> MakeConf(const Config& values) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [name, value] : values) {
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("librdkafka config " + name + "=" + value + ": " + error);
    }
  }
  return conf;
}

Config Merge(Config base, const Config& extra) {
  for (const auto& [name, value] : extra) base[name] = value;
  return base;
}

Headers CopyHeaders(RdKafka::Message& message) {
  Headers out;
  const RdKafka::Headers* headers = message.headers();
  if (headers == nullptr) return out;
  for (const RdKafka::Headers::Header& header : headers->get_all()) {
    if (header.value() == nullptr) {
      out.emplace_back(header.key(), std::nullopt);
    } else {
      out.emplace_back(header.key(),
                       std::string(static_cast<const char*>(header.value()), header.value_size()));
    }
  }
  return out;
}

// Every partition of every topic has a leader in the broker's metadata.
Result<bool> TopicsReady(RdKafka::Producer& handle, const std::vector<TopicSpec>& topics) {
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode err = handle.metadata(true, nullptr, &raw, 5000);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("metadata request: " + RdKafka::err2str(err));
  }
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  for (const TopicSpec& spec : topics) {
    bool ready = false;
    for (const RdKafka::TopicMetadata* topic : *metadata->topics()) {
      if (topic->topic() != spec.name || topic->err() != RdKafka::ERR_NO_ERROR) continue;
      int led = 0;
      for (const RdKafka::PartitionMetadata* partition : *topic->partitions()) {
        if (partition->leader() >= 0) ++led;
      }
      ready = led == spec.partitions;
    }
    if (!ready) return false;
  }
  return true;
}

}  // namespace

Result<std::string> BootstrapFromEnv() {
  const char* value = std::getenv(kBootstrapEnv);
  if (value == nullptr || *value == '\0') {
    return Status::FailedPrecondition(
        std::string(kBootstrapEnv) +
        " is not set: run these tests through ctest (the kafka fixture starts a broker) or start "
        "one with scripts/kafka.sh up and export " +
        kBootstrapEnv + "=127.0.0.1:39092");
  }
  return std::string(value);
}

std::string UniqueName(std::string_view prefix) {
  static std::atomic<int> counter{0};
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(ns) + "-" +
         std::to_string(counter++);
}

Status CreateTopics(const std::string& bootstrap, const std::vector<TopicSpec>& topics) {
  auto conf = MakeConf({{"bootstrap.servers", bootstrap}});
  if (!conf.ok()) return conf.status();
  std::string error;
  std::unique_ptr<RdKafka::Producer> handle(RdKafka::Producer::create(conf->get(), error));
  if (!handle) return Status::Unavailable("admin client: " + error);
  rd_kafka_t* rk = handle->c_ptr();

  std::vector<rd_kafka_NewTopic_t*> new_topics;
  char errstr[512];
  for (const TopicSpec& spec : topics) {
    rd_kafka_NewTopic_t* topic =
        rd_kafka_NewTopic_new(spec.name.c_str(), spec.partitions, 1, errstr, sizeof(errstr));
    if (topic == nullptr) {
      rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size());
      return Status::InvalidArgument("topic " + spec.name + ": " + errstr);
    }
    new_topics.push_back(topic);
    for (const auto& [name, value] : spec.configs) {
      if (rd_kafka_NewTopic_set_config(topic, name.c_str(), value.c_str()) != 0) {
        rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size());
        return Status::InvalidArgument("topic " + spec.name + ": config " + name);
      }
    }
  }
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(options, 30000, errstr, sizeof(errstr));
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, new_topics.data(), new_topics.size(), options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);

  Status status;
  if (event == nullptr) {
    status = Status::Unavailable("CreateTopics: no answer within 60 s");
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status =
        Status::Unavailable(std::string("CreateTopics: ") + rd_kafka_event_error_string(event));
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count && status.ok(); ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = Status::Unavailable(std::string("create topic ") +
                                     rd_kafka_topic_result_name(results[i]) + ": " +
                                     rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size());
  if (!status.ok()) return status;

  // CreateTopics returns once the controller accepted them; leaders follow shortly after.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    Result<bool> ready = TopicsReady(*handle, topics);
    if (ready.ok() && *ready) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Unavailable("created topics have no leader after 30 s");
}

std::optional<std::string> HeaderValue(const Headers& headers, std::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

void TestProducer::DeliveryCounter::dr_cb(RdKafka::Message& message) {
  if (message.err() == RdKafka::ERR_NO_ERROR) {
    if (auto* acked = static_cast<testing::ProducedAt*>(message.msg_opaque())) {
      acked->partition = message.partition();
      acked->offset = message.offset();
    }
    return;
  }
  if (failed++ == 0) first_error = message.errstr();
}

Result<std::unique_ptr<TestProducer>> TestProducer::Create(const std::string& bootstrap,
                                                           const Config& extra_config) {
  std::unique_ptr<TestProducer> producer(new TestProducer());
  auto conf = MakeConf(Merge({{"bootstrap.servers", bootstrap},
                              {"enable.idempotence", "true"},
                              {"acks", "all"},
                              {"linger.ms", "5"},
                              {"partitioner", "murmur2_random"}},
                             extra_config));
  if (!conf.ok()) return conf.status();
  std::string error;
  if ((*conf)->set("dr_cb", &producer->delivery_, error) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("dr_cb: " + error);
  }
  producer->producer_.reset(RdKafka::Producer::create(conf->get(), error));
  if (!producer->producer_) return Status::Unavailable("producer: " + error);
  return producer;
}

Status TestProducer::Produce(const OutgoingRecord& record, testing::ProducedAt* acked) {
  while (true) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const auto& [name, value] : record.headers) {
      if (value) {
        headers->add(name, value->data(), value->size());
      } else {
        headers->add(name, nullptr, 0);
      }
    }
    const RdKafka::ErrorCode err = producer_->produce(
        record.topic, record.partition, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(record.value.data()), record.value.size(),
        record.key ? record.key->data() : nullptr, record.key ? record.key->size() : 0,
        record.timestamp_ms, headers, acked);
    if (err == RdKafka::ERR_NO_ERROR) return Status::Ok();
    delete headers;  // only owned by librdkafka on success
    if (err != RdKafka::ERR__QUEUE_FULL) {
      return Status::Unavailable("produce to " + record.topic + ": " + RdKafka::err2str(err));
    }
    producer_->poll(50);
  }
}

Status TestProducer::Flush(std::chrono::milliseconds timeout) {
  const RdKafka::ErrorCode err = producer_->flush(static_cast<int>(timeout.count()));
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("flush: " + RdKafka::err2str(err) + " with " +
                               std::to_string(producer_->outq_len()) + " records outstanding");
  }
  if (delivery_.failed > 0) {
    return Status::Unavailable(std::to_string(delivery_.failed) +
                               " records failed delivery, first: " + delivery_.first_error);
  }
  return Status::Ok();
}

Result<std::unique_ptr<TestConsumer>> TestConsumer::Create(const std::string& bootstrap,
                                                           const std::string& group_id,
                                                           const Config& extra_config) {
  auto conf = MakeConf(Merge({{"bootstrap.servers", bootstrap},
                              {"group.id", group_id},
                              {"auto.offset.reset", "earliest"},
                              {"enable.auto.commit", "false"},
                              {"session.timeout.ms", "10000"}},
                             extra_config));
  if (!conf.ok()) return conf.status();
  std::string error;
  std::unique_ptr<TestConsumer> consumer(new TestConsumer());
  consumer->consumer_.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (!consumer->consumer_) return Status::Unavailable("consumer: " + error);
  return consumer;
}

TestConsumer::~TestConsumer() {
  if (consumer_) consumer_->close();
}

Status TestConsumer::Subscribe(const std::vector<std::string>& topics) {
  const RdKafka::ErrorCode err = consumer_->subscribe(topics);
  if (err != RdKafka::ERR_NO_ERROR)
    return Status::Unavailable("subscribe: " + RdKafka::err2str(err));
  return Status::Ok();
}

Status TestConsumer::AssignFromBeginning(
    const std::map<std::string, int32_t>& partitions_by_topic) {
  std::vector<RdKafka::TopicPartition*> partitions;
  for (const auto& [topic, count] : partitions_by_topic) {
    for (int32_t p = 0; p < count; ++p) {
      partitions.push_back(
          RdKafka::TopicPartition::create(topic, p, RdKafka::Topic::OFFSET_BEGINNING));
    }
  }
  const RdKafka::ErrorCode err = consumer_->assign(partitions);
  RdKafka::TopicPartition::destroy(partitions);
  if (err != RdKafka::ERR_NO_ERROR) return Status::Unavailable("assign: " + RdKafka::err2str(err));
  return Status::Ok();
}

std::vector<ConsumedRecord> TestConsumer::ConsumeUntil(
    const std::function<bool(const std::vector<ConsumedRecord>&)>& done,
    std::chrono::milliseconds timeout) {
  std::vector<ConsumedRecord> records;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(records)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    std::unique_ptr<RdKafka::Message> message(
        consumer_->consume(static_cast<int>(std::min<int64_t>(left.count(), 100))));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;  // timeouts, partition EOF, retries
    ConsumedRecord record;
    record.topic = message->topic_name();
    record.partition = message->partition();
    record.offset = message->offset();
    if (message->key() != nullptr) record.key = *message->key();
    record.value.assign(static_cast<const char*>(message->payload()), message->len());
    record.headers = CopyHeaders(*message);
    record.timestamp_ms = message->timestamp().timestamp;
    record.received_at_ms = NowMs();
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<ConsumedRecord> TestConsumer::ConsumeFor(std::chrono::milliseconds quiet) {
  return ConsumeUntil([](const std::vector<ConsumedRecord>&) { return false; }, quiet);
}

Status TestConsumer::CommitSync() {
  const RdKafka::ErrorCode err = consumer_->commitSync();
  if (err != RdKafka::ERR_NO_ERROR) return Status::Unavailable("commit: " + RdKafka::err2str(err));
  return Status::Ok();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace delaybridge::e2e
