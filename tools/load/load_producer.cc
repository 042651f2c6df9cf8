#include "tools/load/load_producer.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "tools/load/record_stamp.h"
#include "tools/load/token_bucket.h"

namespace delaybridge::load {

namespace {

int64_t EpochMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t SteadyNs() {
  using namespace std::chrono;
  return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

// Records handed to librdkafka per token-bucket grant: large enough to amortise the clock
// reads, small enough (about 1 ms of records at 1M/s) to keep the pacing smooth.
constexpr int64_t kMaxGrant = 1024;

}  // namespace

LoadProducer::LoadProducer(const LoadOptions& options, uint64_t run_id)
    : options_(options),
      topic_(ProducedTopic(options)),
      run_id_(run_id),
      engine_(options.seed),
      value_(static_cast<size_t>(options.payload_bytes), std::byte{'x'}) {}

void LoadProducer::OnDeliveryReport(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* self = static_cast<LoadProducer*>(opaque);
  const auto record_id = reinterpret_cast<uintptr_t>(message->_private);
  if (record_id & kWarmupIdBit) return;
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++self->result_.acked;
    self->result_.acked_flag[record_id] = 1;
    self->result_.ack_latency.Record((EpochMs() - self->result_.sent_ms[record_id]) * 1000);
  } else {
    ++self->result_.failed;
  }
  self->result_.flushed_ms = EpochMs();
}

bool LoadProducer::Finished(uint64_t record_id, int64_t elapsed_ms) const {
  if (options_.count > 0) return record_id >= static_cast<uint64_t>(options_.count);
  return elapsed_ms >= options_.duration_ms;
}

Status LoadProducer::ProduceOne(rd_kafka_t* producer, uint64_t record_id) {
  const int64_t now_ms = EpochMs();
  const int64_t delay_ms =
      due_at_ms_ > 0 ? std::max<int64_t>(0, due_at_ms_ - now_ms) : options_.delay.NextMs(engine_);
  const int64_t deliver_at_ms = due_at_ms_ > 0 ? due_at_ms_ : now_ms + delay_ms;
  // The passthrough pipe forwards at once (or at the shared due time), so that is when its
  // records are due.
  const int64_t stamped_deliver_at_ms =
      options_.mode == LoadMode::kPassthrough && due_at_ms_ == 0 ? now_ms : deliver_at_ms;
  result_.deliver_at_ms.push_back(stamped_deliver_at_ms);
  result_.acked_flag.push_back(0);
  result_.sent_ms.push_back(now_ms);
  const bool use_delay_header =
      options_.header_style == HeaderStyle::kDelay ||
      (options_.header_style == HeaderStyle::kMixed && record_id % 2 == 0);
  Status status = Send(producer, {run_id_, record_id, stamped_deliver_at_ms}, now_ms,
                       use_delay_header ? "x-delay" : "x-deliver-at",
                       std::to_string(use_delay_header ? delay_ms : deliver_at_ms));
  if (!status.ok()) return status;
  if (record_id == 0) result_.first_send_ms = now_ms;
  result_.last_send_ms = now_ms;
  return Status::Ok();
}

Status LoadProducer::Send(rd_kafka_t* producer, const RecordStamp& stamp, int64_t timestamp_ms,
                          const std::string& header_name, const std::string& header_value) {
  EncodeRecordStamp(stamp, value_);
  std::string key;
  if (options_.keys > 0) {
    key = "key-" +
          std::to_string(std::uniform_int_distribution<int64_t>(0, options_.keys - 1)(engine_));
  }
  while (true) {
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        producer, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
        RD_KAFKA_V_VALUE(value_.data(), value_.size()), RD_KAFKA_V_TIMESTAMP(timestamp_ms),
        RD_KAFKA_V_HEADER(header_name.c_str(), header_value.data(),
                          static_cast<ssize_t>(header_value.size())),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(stamp.record_id))),
        RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return Status::Unavailable("produce to " + topic_ + ": " + rd_kafka_err2str(err));
    }
    rd_kafka_poll(producer, 5);  // local queue full: let acknowledgements drain it
  }
}

Status LoadProducer::RunWarmup(rd_kafka_t* producer, int64_t count, int flush_timeout_ms) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t now_ms = EpochMs();
    Status status = Send(producer, {run_id_, kWarmupIdBit | static_cast<uint64_t>(i), now_ms},
                         now_ms, "x-delay", "0");
    if (!status.ok()) return status.WithContext("warm-up");
  }
  const rd_kafka_resp_err_t err = rd_kafka_flush(producer, flush_timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("warm-up: flush to " + topic_ + ": " + rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Result<ProduceResult> LoadProducer::Run(rd_kafka_t* producer, int flush_timeout_ms,
                                        const std::function<void()>& progress,
                                        int64_t progress_interval_ms, int64_t due_at_ms) {
  due_at_ms_ = due_at_ms;
  const int64_t start_ns = SteadyNs();
  // 10 ms of records: smooth at the scale of the lateness being measured, yet a producer that
  // loses the CPU for a few milliseconds on a busy machine catches up instead of falling behind.
  const int64_t burst = std::max<int64_t>(1, static_cast<int64_t>(options_.rate_per_s / 100));
  TokenBucket bucket(options_.rate_per_s, burst, start_ns);
  int64_t next_progress_ns = start_ns + progress_interval_ms * 1'000'000;
  uint64_t record_id = 0;
  while (true) {
    const int64_t now_ns = SteadyNs();
    if (Finished(record_id, (now_ns - start_ns) / 1'000'000)) break;
    if (now_ns >= next_progress_ns) {
      progress();
      next_progress_ns = now_ns + progress_interval_ms * 1'000'000;
    }
    int64_t want = kMaxGrant;
    if (options_.count > 0) want = std::min<int64_t>(want, options_.count - record_id);
    const int64_t granted = bucket.Take(want, now_ns);
    if (granted == 0) {
      rd_kafka_poll(producer, 0);
      const int64_t wait_ns = std::min<int64_t>(bucket.NanosUntilNextToken(now_ns), 1'000'000);
      std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
      continue;
    }
    for (int64_t i = 0; i < granted; ++i, ++record_id) {
      attempted_.store(record_id + 1, std::memory_order_release);
      Status status = ProduceOne(producer, record_id);
      if (!status.ok()) return status;
    }
    rd_kafka_poll(producer, 0);
  }
  result_.attempted = static_cast<int64_t>(record_id);
  const rd_kafka_resp_err_t err = rd_kafka_flush(producer, flush_timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("flush to " + topic_ + ": " + rd_kafka_err2str(err) + " (" +
                               std::to_string(rd_kafka_outq_len(producer)) +
                               " records still queued)");
  }
  return std::move(result_);
}

}  // namespace delaybridge::load
