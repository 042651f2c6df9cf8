#include "tools/load/target_consumer.h"

#include <array>
#include <chrono>
#include <cstdio>

#include "tools/load/kafka_client.h"
#include "tools/load/record_stamp.h"

namespace delaybridge::load {

namespace {

int64_t EpochUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

constexpr size_t kBatchSize = 4096;
constexpr int kPollTimeoutMs = 50;

}  // namespace

TargetConsumer::TargetConsumer(rd_kafka_t* consumer, uint64_t run_id,
                               const std::atomic<uint64_t>& ids_produced, int64_t list_late_over_ms)
    : consumer_(consumer),
      run_id_(run_id),
      ids_produced_(ids_produced),
      list_late_over_ms_(list_late_over_ms) {}

void TargetConsumer::Run(const std::atomic<bool>& stop) {
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer_);
  std::array<rd_kafka_message_t*, kBatchSize> batch{};
  while (!stop.load(std::memory_order_acquire)) {
    const size_t got = ConsumeAvailable(queue, kPollTimeoutMs, batch);
    // One clock read per batch: records of a batch were handed over at the same moment.
    const int64_t consumed_us = EpochUs();
    for (size_t i = 0; i < got; ++i) {
      Take(*batch[i], consumed_us);
      rd_kafka_message_destroy(batch[i]);
    }
  }
  rd_kafka_queue_destroy(queue);
}

void TargetConsumer::Take(const rd_kafka_message_t& message, int64_t consumed_us) {
  if (message.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (message.err != RD_KAFKA_RESP_ERR__PARTITION_EOF && tally_.consume_errors++ < 10) {
      std::fprintf(stderr, "delaybridge-load: consume error: %s\n",
                   rd_kafka_message_errstr(&message));
    }
    return;
  }
  const std::optional<RecordStamp> stamp = DecodeRecordStamp(
      std::span<const std::byte>(static_cast<const std::byte*>(message.payload), message.len));
  if (stamp && stamp->run_id == run_id_ && (stamp->record_id & kWarmupIdBit)) {
    warmup_arrivals_.fetch_add(1, std::memory_order_release);
    return;
  }
  if (!stamp || stamp->run_id != run_id_ ||
      stamp->record_id >= ids_produced_.load(std::memory_order_acquire)) {
    ++tally_.foreign;
    return;
  }
  if (stamp->record_id >= tally_.arrivals.size()) {
    tally_.arrivals.resize(std::max<size_t>(stamp->record_id + 1, tally_.arrivals.size() * 2));
  }
  uint8_t& arrivals = tally_.arrivals[stamp->record_id];
  if (arrivals < 255) ++arrivals;
  if (arrivals > 1) {
    ++tally_.duplicates;
    return;
  }
  const int64_t consumed_ms = consumed_us / 1000;
  if (tally_.delivered_unique == 0) tally_.first_delivery_ms = consumed_ms;
  tally_.last_delivery_ms = consumed_ms;
  ++tally_.delivered_unique;
  delivered_unique_.store(tally_.delivered_unique, std::memory_order_release);

  const int64_t consume_lateness_us = consumed_us - stamp->deliver_at_ms * 1000;
  tally_.consume_lateness.Record(consume_lateness_us);
  bool early = consume_lateness_us < 0;
  rd_kafka_timestamp_type_t timestamp_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
  const int64_t timestamp_ms = rd_kafka_message_timestamp(&message, &timestamp_type);
  if (timestamp_type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) {
    tally_.broker_lateness.Record((timestamp_ms - stamp->deliver_at_ms) * 1000);
  }
  if (timestamp_type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME) {
    ++tally_.log_append_time_records;
    if (list_late_over_ms_ >= 0 && timestamp_ms - stamp->deliver_at_ms > list_late_over_ms_) {
      tally_.late_records.push_back({stamp->deliver_at_ms, timestamp_ms});
    }
    if (timestamp_ms < stamp->deliver_at_ms) {
      ++tally_.early_by_append_time;
      early = true;
    }
  } else if (timestamp_type == RD_KAFKA_TIMESTAMP_CREATE_TIME) {
    ++tally_.create_time_records;
  }
  if (early) ++tally_.early_records;
}

}  // namespace delaybridge::load
