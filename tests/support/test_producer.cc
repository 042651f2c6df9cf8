#include "tests/support/test_producer.h"

namespace delaybridge::testing {

void TestProducer::DeliveryReports::dr_cb(RdKafka::Message& message) {
  if (message.err() == RdKafka::ERR_NO_ERROR) {
    if (auto* acked = static_cast<ProducedAt*>(message.msg_opaque())) {
      acked->partition = message.partition();
      acked->offset = message.offset();
    }
    return;
  }
  if (failed++ == 0) first_error = message.errstr();
}

Result<std::unique_ptr<TestProducer>> TestProducer::Create(const std::string& bootstrap,
                                                           const KafkaConfig& extra_config) {
  std::unique_ptr<TestProducer> producer(new TestProducer());
  auto conf = MakeKafkaConf({{"bootstrap.servers", bootstrap},
                             {"enable.idempotence", "true"},
                             {"acks", "all"},
                             {"linger.ms", "5"},
                             {"partitioner", "murmur2_random"}},
                            extra_config);
  if (!conf.ok()) return conf.status();
  std::string error;
  if ((*conf)->set("dr_cb", &producer->reports_, error) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("dr_cb: " + error);
  }
  producer->producer_.reset(RdKafka::Producer::create(conf->get(), error));
  if (!producer->producer_) return Status::Unavailable("test producer: " + error);
  return producer;
}

Status TestProducer::Produce(const TestRecord& record, ProducedAt* acked) {
  while (true) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const TestHeader& header : record.headers) {
      headers->add(header.name, header.value ? header.value->data() : nullptr,
                   header.value ? header.value->size() : 0);
    }
    const RdKafka::ErrorCode err = producer_->produce(
        record.topic, record.partition < 0 ? RdKafka::Topic::PARTITION_UA : record.partition,
        RdKafka::Producer::RK_MSG_COPY,
        record.value ? const_cast<char*>(record.value->data()) : nullptr,
        record.value ? record.value->size() : 0, record.key ? record.key->data() : nullptr,
        record.key ? record.key->size() : 0, record.timestamp_ms, headers, acked);
    if (err == RdKafka::ERR_NO_ERROR) return Status::Ok();
    delete headers;  // owned by librdkafka only on success
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
  if (reports_.failed > 0) {
    return Status::Unavailable(std::to_string(reports_.failed) +
                               " records failed delivery, first: " + reports_.first_error);
  }
  return Status::Ok();
}

}  // namespace delaybridge::testing
