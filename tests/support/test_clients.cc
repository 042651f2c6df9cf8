#include "tests/support/test_clients.h"

#include <algorithm>
#include <sstream>

namespace delaybridge::testing {

namespace {

Status SetAll(RdKafka::Conf* conf,
              const std::vector<std::pair<std::string, std::string>>& properties) {
  std::string errstr;
  for (const auto& [key, value] : properties) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(key + ": " + errstr);
    }
  }
  return Status::Ok();
}

}  // namespace

std::optional<std::string> TestRecord::Header(const std::string& name) const {
  std::optional<std::string> found;
  for (const auto& h : headers) {
    if (h.name == name) found = h.value;
  }
  return found;
}

void TestProducer::Reports::dr_cb(RdKafka::Message& message) {
  if (message.err() != RdKafka::ERR_NO_ERROR) {
    ++failures;
    last_error = message.errstr();
  } else if (auto* acked = static_cast<ProducedAt*>(message.msg_opaque())) {
    acked->partition = message.partition();
    acked->offset = message.offset();
  }
}

Result<std::unique_ptr<TestProducer>> TestProducer::Create(const std::string& bootstrap) {
  std::unique_ptr<TestProducer> p(new TestProducer());
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  if (Status s = SetAll(conf.get(), {{"bootstrap.servers", bootstrap},
                                     {"enable.idempotence", "true"},
                                     {"partitioner", "murmur2_random"},
                                     {"linger.ms", "5"}});
      !s.ok()) {
    return s;
  }
  std::string errstr;
  conf->set("dr_cb", &p->reports_, errstr);
  p->producer_.reset(RdKafka::Producer::create(conf.get(), errstr));
  if (!p->producer_) return Status::Unavailable("test producer: " + errstr);
  return p;
}

TestProducer::~TestProducer() = default;

Status TestProducer::Produce(const TestRecord& r, ProducedAt* acked) {
  while (true) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const auto& h : r.headers) {
      headers->add(h.name, h.value ? h.value->data() : nullptr, h.value ? h.value->size() : 0);
    }
    const RdKafka::ErrorCode err = producer_->produce(
        r.topic, r.partition < 0 ? RdKafka::Topic::PARTITION_UA : r.partition,
        RdKafka::Producer::RK_MSG_COPY, r.value ? const_cast<char*>(r.value->data()) : nullptr,
        r.value ? r.value->size() : 0, r.key ? r.key->data() : nullptr, r.key ? r.key->size() : 0,
        r.timestamp_ms, headers, acked);
    if (err == RdKafka::ERR_NO_ERROR) return Status::Ok();
    delete headers;
    if (err != RdKafka::ERR__QUEUE_FULL) {
      return Status::Unavailable("produce to " + r.topic + ": " + RdKafka::err2str(err));
    }
    producer_->poll(10);
  }
}

Status TestProducer::Flush(std::chrono::milliseconds timeout) {
  if (producer_->flush(static_cast<int>(timeout.count())) != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("test producer: records still unacknowledged after flush");
  }
  if (reports_.failures > 0) {
    return Status::Unavailable(std::to_string(reports_.failures) +
                               " records failed: " + reports_.last_error);
  }
  return Status::Ok();
}

Result<std::unique_ptr<TestConsumer>> TestConsumer::Create(
    const std::string& bootstrap, const std::vector<std::pair<std::string, int>>& topics) {
  std::unique_ptr<TestConsumer> c(new TestConsumer());
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  // group.id is required by the KafkaConsumer API even without subscribing; nothing commits.
  if (Status s = SetAll(conf.get(), {{"bootstrap.servers", bootstrap},
                                     {"group.id", "delaybridge-test-reader"},
                                     {"enable.auto.commit", "false"},
                                     {"enable.partition.eof", "false"}});
      !s.ok()) {
    return s;
  }
  std::string errstr;
  c->consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), errstr));
  if (!c->consumer_) return Status::Unavailable("test consumer: " + errstr);
  std::vector<RdKafka::TopicPartition*> assignment;
  for (const auto& [topic, partitions] : topics) {
    for (int p = 0; p < partitions; ++p) {
      assignment.push_back(
          RdKafka::TopicPartition::create(topic, p, RdKafka::Topic::OFFSET_BEGINNING));
    }
  }
  const RdKafka::ErrorCode err = c->consumer_->assign(assignment);
  RdKafka::TopicPartition::destroy(assignment);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("test consumer assign: " + RdKafka::err2str(err));
  }
  return c;
}

TestConsumer::~TestConsumer() {
  if (consumer_) consumer_->close();
}

std::vector<TestRecord> TestConsumer::Poll(std::chrono::milliseconds timeout) {
  std::vector<TestRecord> out;
  int wait_ms = static_cast<int>(timeout.count());
  while (true) {
    std::unique_ptr<RdKafka::Message> m(consumer_->consume(wait_ms));
    wait_ms = 0;  // after the first record, take only what is already there
    if (!m || m->err() == RdKafka::ERR__TIMED_OUT) break;
    if (m->err() != RdKafka::ERR_NO_ERROR) continue;
    TestRecord r;
    r.topic = m->topic_name();
    r.partition = m->partition();
    r.offset = m->offset();
    r.timestamp_ms = m->timestamp().timestamp;
    if (m->key_pointer()) r.key.emplace(static_cast<const char*>(m->key_pointer()), m->key_len());
    if (m->payload()) r.value.emplace(static_cast<const char*>(m->payload()), m->len());
    if (RdKafka::Headers* headers = m->headers()) {
      for (const auto& h : headers->get_all()) {
        TestHeader header{h.key(), std::nullopt};
        if (h.value()) header.value.emplace(static_cast<const char*>(h.value()), h.value_size());
        r.headers.push_back(std::move(header));
      }
    }
    out.push_back(std::move(r));
    if (out.size() >= 10'000) break;
  }
  return out;
}

bool TestConsumer::CollectUntil(std::vector<TestRecord>* out,
                                const std::function<bool(const std::vector<TestRecord>&)>& done,
                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(*out)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    for (auto& r : Poll(std::chrono::milliseconds(100))) out->push_back(std::move(r));
  }
  return true;
}

}  // namespace delaybridge::testing
