// KafkaClient: the small slice of librdkafka's C API that delaybridge-load needs, wrapped so
// that every failure comes back as a Status naming the topic or property, and every handle is
// destroyed on every path.
//
// Client settings (why, for a throughput meter): producers batch up to 10,000 records for at
// most 5 ms (linger.ms=5, batch.num.messages=10000, batch.size=1MB) with acks=all and
// enable.idempotence=true, like the bridge's delivery producer; consumers keep up to 200,000
// records prefetched (queued.min.messages) and fetch up to 4 MB per partition, and are read
// with ConsumeAvailable. -X overrides any of these.
//
// Thread-safety: librdkafka handles are thread-safe as librdkafka documents; the helpers here
// hold no state of their own.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace delaybridge::load {

struct KafkaHandleDeleter {
  void operator()(rd_kafka_t* handle) const { rd_kafka_destroy(handle); }
};
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaHandleDeleter>;

using KafkaProperties = std::vector<std::pair<std::string, std::string>>;

// Properties applied before the caller's -X overrides.
KafkaProperties DefaultProducerProperties();
KafkaProperties DefaultConsumerProperties();

// Creates a producer. `dr_msg_cb` may be null; `opaque` is passed to it.
Result<KafkaHandle> NewProducer(const std::string& bootstrap, const KafkaProperties& defaults,
                                const KafkaProperties& overrides,
                                void (*dr_msg_cb)(rd_kafka_t*, const rd_kafka_message_t*, void*),
                                void* opaque);

// Creates a consumer whose messages are read from rd_kafka_queue_get_consumer. It joins no
// group unless the caller subscribes; group_id is used for assign() bookkeeping and committed().
Result<KafkaHandle> NewConsumer(const std::string& bootstrap, const std::string& group_id,
                                const KafkaProperties& defaults, const KafkaProperties& overrides);

// Number of partitions of `topic`; NotFound when the topic does not exist.
Result<int32_t> PartitionCount(rd_kafka_t* handle, const std::string& topic, int timeout_ms);

// The high watermark of every partition of `topic` (index = partition).
Result<std::vector<int64_t>> EndOffsets(rd_kafka_t* handle, const std::string& topic,
                                        int32_t partitions, int timeout_ms);

// Takes what `queue` holds right now, up to batch.size() messages; when it holds nothing,
// waits up to timeout_ms for the first one. (rd_kafka_consume_batch_queue alone waits until the
// batch is full or the timeout passes, which would add up to timeout_ms to every measured
// lateness at low rates.) Returns the number of messages stored in `batch`.
size_t ConsumeAvailable(rd_kafka_queue_t* queue, int timeout_ms,
                        std::span<rd_kafka_message_t*> batch);

// Assigns every partition of `topic` to `consumer`, starting at offsets[partition].
Status AssignFrom(rd_kafka_t* consumer, const std::string& topic,
                  const std::vector<int64_t>& offsets);

// A consumer (DefaultConsumerProperties, then `overrides`) of every partition of `topic`,
// positioned at its end offsets as `metadata_handle` reads them now, so that it sees exactly
// what is written from now on.
Result<KafkaHandle> NewConsumerAtEnd(rd_kafka_t* metadata_handle, const std::string& bootstrap,
                                     const std::string& group_id, const std::string& topic,
                                     int32_t partitions, const KafkaProperties& overrides,
                                     int timeout_ms);

// How far group `consumer`'s group.id has read `topic` (-1 where it committed nothing): the
// committed offset, or for a DelayBridge group the ingest position in the offset's metadata
// (plugin/progress_metadata.h; the bridge commits its low watermark, which stays at the oldest
// pending record).
Result<std::vector<int64_t>> CommittedOffsets(rd_kafka_t* consumer, const std::string& topic,
                                              int32_t partitions, int timeout_ms);

// Creates `topic` with `partitions` partitions and the given topic configs; a topic that
// already exists is fine (its partition count is left as it is).
Status CreateTopic(rd_kafka_t* handle, const std::string& topic, int32_t partitions,
                   const KafkaProperties& topic_configs, int timeout_ms);

}  // namespace delaybridge::load
