#include "tests/support/test_consumer.h"

#include "tests/support/now_ms.h"

namespace delaybridge::testing {
namespace {

TestRecord ToTestRecord(RdKafka::Message& message) {
  TestRecord record;
  record.topic = message.topic_name();
  record.partition = message.partition();
  record.offset = message.offset();
  record.timestamp_ms = message.timestamp().timestamp;
  record.received_at_ms = NowMs();
  if (message.key_pointer() != nullptr) {
    record.key.emplace(static_cast<const char*>(message.key_pointer()), message.key_len());
  }
  if (message.payload() != nullptr) {
    record.value.emplace(static_cast<const char*>(message.payload()), message.len());
  }
  if (const RdKafka::Headers* headers = message.headers()) {
    for (const RdKafka::Headers::Header& header : headers->get_all()) {
      TestHeader copy{header.key(), std::nullopt};
      if (header.value() != nullptr) {
        copy.value.emplace(static_cast<const char*>(header.value()), header.value_size());
      }
      record.headers.push_back(std::move(copy));
    }
  }
  return record;
}

}  // namespace

Result<std::unique_ptr<TestConsumer>> TestConsumer::Create(const std::string& bootstrap,
                                                           const std::string& group_id,
                                                           const KafkaConfig& extra_config) {
  auto conf = MakeKafkaConf({{"bootstrap.servers", bootstrap},
                             {"group.id", group_id},
                             {"auto.offset.reset", "earliest"},
                             {"enable.auto.commit", "false"},
                             {"session.timeout.ms", "10000"}},
                            extra_config);
  if (!conf.ok()) return conf.status();
  std::string error;
  std::unique_ptr<TestConsumer> consumer(new TestConsumer());
  consumer->consumer_.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (!consumer->consumer_) return Status::Unavailable("test consumer: " + error);
  return consumer;
}

TestConsumer::~TestConsumer() {
  if (consumer_) consumer_->close();
}

Status TestConsumer::Subscribe(const std::vector<std::string>& topics) {
  const RdKafka::ErrorCode err = consumer_->subscribe(topics);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("subscribe: " + RdKafka::err2str(err));
  }
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

std::vector<TestRecord> TestConsumer::ConsumeUntil(
    const std::function<bool(const std::vector<TestRecord>&)>& done,
    std::chrono::milliseconds timeout) {
  std::vector<TestRecord> records;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(records)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    std::unique_ptr<RdKafka::Message> message(
        consumer_->consume(static_cast<int>(std::min<int64_t>(left.count(), 100))));
    if (message->err() != RdKafka::ERR_NO_ERROR) continue;  // timeouts, partition EOF, retries
    records.push_back(ToTestRecord(*message));
  }
  return records;
}

std::vector<TestRecord> TestConsumer::ConsumeFor(std::chrono::milliseconds quiet) {
  return ConsumeUntil([](const std::vector<TestRecord>&) { return false; }, quiet);
}

Status TestConsumer::CommitSync() {
  const RdKafka::ErrorCode err = consumer_->commitSync();
  if (err != RdKafka::ERR_NO_ERROR) return Status::Unavailable("commit: " + RdKafka::err2str(err));
  return Status::Ok();
}

}  // namespace delaybridge::testing
