#include "tools/load/passthrough_pipe.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>
#include <utility>

#include "tools/load/kafka_client.h"

namespace delaybridge::load {

namespace {

constexpr size_t kBatchSize = 4096;
constexpr int kPollTimeoutMs = 20;
constexpr int kFlushTimeoutMs = 30'000;
constexpr int kMetadataTimeoutMs = 10'000;

int64_t EpochMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

Result<std::unique_ptr<PassthroughPipe>> PassthroughPipe::Connect(
    const std::string& bootstrap, const std::string& delay_topic, const std::string& target_topic,
    const std::string& group_id, const KafkaProperties& overrides) {
  Result<KafkaHandle> producer =
      NewProducer(bootstrap, DefaultProducerProperties(), overrides, nullptr, nullptr);
  if (!producer.ok()) return producer.status();
  Result<int32_t> partitions = PartitionCount(producer->get(), delay_topic, kMetadataTimeoutMs);
  if (!partitions.ok()) return partitions.status();
  Result<KafkaHandle> consumer = NewConsumerAtEnd(producer->get(), bootstrap, group_id, delay_topic,
                                                  *partitions, overrides, kMetadataTimeoutMs);
  if (!consumer.ok()) return consumer.status();
  return std::unique_ptr<PassthroughPipe>(
      new PassthroughPipe(std::move(consumer.value()), std::move(producer.value()), target_topic));
}

PassthroughPipe::PassthroughPipe(KafkaHandle consumer, KafkaHandle producer,
                                 std::string target_topic)
    : consumer_(std::move(consumer)),
      producer_(std::move(producer)),
      target_topic_(std::move(target_topic)) {}

Status PassthroughPipe::Run(const std::atomic<bool>& stop,
                            const std::atomic<int64_t>& hold_until_ms) {
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer_.get());
  std::array<rd_kafka_message_t*, kBatchSize> batch{};
  Status status;
  while (status.ok() && !stop.load(std::memory_order_acquire)) {
    const int64_t hold_ms = hold_until_ms.load(std::memory_order_acquire) - EpochMs();
    if (hold_ms > 0) {
      rd_kafka_poll(producer_.get(), 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(hold_ms, 5)));
      continue;
    }
    const size_t got = ConsumeAvailable(queue, kPollTimeoutMs, batch);
    for (size_t i = 0; i < got; ++i) {
      if (status.ok() && batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) status = Forward(*batch[i]);
      rd_kafka_message_destroy(batch[i]);
    }
    rd_kafka_poll(producer_.get(), 0);
  }
  rd_kafka_queue_destroy(queue);
  if (!status.ok()) return status;
  const rd_kafka_resp_err_t err = rd_kafka_flush(producer_.get(), kFlushTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("passthrough flush to " + target_topic_ + ": " +
                               rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Status PassthroughPipe::Forward(rd_kafka_message_t& message) {
  rd_kafka_headers_t* source_headers = nullptr;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &source_headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    headers = rd_kafka_headers_copy(source_headers);
    for (const char* name : {"x-delay", "x-deliver-at", "x-target-topic"}) {
      rd_kafka_header_remove(headers, name);
    }
  } else {
    headers = rd_kafka_headers_new(1);
  }
  const std::string source = std::string(rd_kafka_topic_name(message.rkt)) + "/" +
                             std::to_string(message.partition) + "/" +
                             std::to_string(message.offset);
  rd_kafka_header_add(headers, "x-delay-source", -1, source.data(),
                      static_cast<ssize_t>(source.size()));
  while (true) {
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_.get(), RD_KAFKA_V_TOPIC(target_topic_.c_str()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(message.key, message.key_len),
        RD_KAFKA_V_VALUE(message.payload, message.len), RD_KAFKA_V_HEADERS(headers),
        RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;  // the record now owns `headers`
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_headers_destroy(headers);
      return Status::Unavailable("passthrough produce to " + target_topic_ + ": " +
                                 rd_kafka_err2str(err));
    }
    rd_kafka_poll(producer_.get(), 5);
  }
  forwarded_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace delaybridge::load
