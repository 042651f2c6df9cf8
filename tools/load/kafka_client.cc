#include "tools/load/kafka_client.h"

#include <array>
#include <chrono>
#include <thread>

#include "plugin/progress_metadata.h"

namespace delaybridge::load {

namespace {

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
using Conf = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

Status SetAll(rd_kafka_conf_t* conf, const KafkaProperties& properties) {
  std::array<char, 512> error{};
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error.data(), error.size()) !=
        RD_KAFKA_CONF_OK) {
      return Status::InvalidArgument("librdkafka property " + key + "=" + value + ": " +
                                     error.data());
    }
  }
  return Status::Ok();
}

Result<Conf> BuildConf(const std::string& bootstrap, const KafkaProperties& defaults,
                       const KafkaProperties& overrides) {
  Conf conf(rd_kafka_conf_new());
  Status status = SetAll(conf.get(), {{"bootstrap.servers", bootstrap}});
  if (status.ok()) status = SetAll(conf.get(), defaults);
  if (status.ok()) status = SetAll(conf.get(), overrides);
  if (!status.ok()) return status;
  return conf;
}

Result<KafkaHandle> NewHandle(rd_kafka_type_t type, Conf conf) {
  std::array<char, 512> error{};
  rd_kafka_t* handle = rd_kafka_new(type, conf.get(), error.data(), error.size());
  if (handle == nullptr) {
    return Status::InvalidArgument(std::string("create Kafka client: ") + error.data());
  }
  conf.release();  // rd_kafka_new took ownership
  return KafkaHandle(handle);
}

PartitionList AllPartitions(const std::string& topic, const std::vector<int64_t>& offsets) {
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (size_t partition = 0; partition < offsets.size(); ++partition) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(partition))
        ->offset = offsets[partition];
  }
  return list;
}

}  // namespace

KafkaProperties DefaultProducerProperties() {
  // max.in.flight 1: librdkafka's idempotent producer (2.0.2 to at least 2.12.1) busy-loops its
  // broker thread while a partition with queued records waits for its in-flight request and no
  // other request is queued; on a machine shared with the broker that spin starves the broker and
  // turns a 50 ms pause into seconds (docs/BENCHMARKS.md). One request per connection never
  // leaves a sendable partition without a queued request, so it waits on the socket instead.
  return {{"acks", "all"},
          {"enable.idempotence", "true"},
          {"max.in.flight", "1"},
          {"linger.ms", "5"},
          {"batch.num.messages", "10000"},
          {"batch.size", "1000000"},
          {"queue.buffering.max.messages", "1000000"},
          {"queue.buffering.max.kbytes", "1048576"},
          {"partitioner", "murmur2_random"}};
}

KafkaProperties DefaultConsumerProperties() {
  return {{"enable.auto.commit", "false"},
          {"enable.partition.eof", "false"},
          {"queued.min.messages", "200000"},
          {"max.partition.fetch.bytes", "4194304"},
          {"fetch.wait.max.ms", "100"}};
}

Result<KafkaHandle> NewProducer(const std::string& bootstrap, const KafkaProperties& defaults,
                                const KafkaProperties& overrides,
                                void (*dr_msg_cb)(rd_kafka_t*, const rd_kafka_message_t*, void*),
                                void* opaque) {
  Result<Conf> conf = BuildConf(bootstrap, defaults, overrides);
  if (!conf.ok()) return conf.status();
  if (dr_msg_cb != nullptr) rd_kafka_conf_set_dr_msg_cb(conf->get(), dr_msg_cb);
  rd_kafka_conf_set_opaque(conf->get(), opaque);
  return NewHandle(RD_KAFKA_PRODUCER, std::move(conf.value()));
}

Result<KafkaHandle> NewConsumer(const std::string& bootstrap, const std::string& group_id,
                                const KafkaProperties& defaults, const KafkaProperties& overrides) {
  KafkaProperties with_group = defaults;
  with_group.emplace_back("group.id", group_id);
  Result<Conf> conf = BuildConf(bootstrap, with_group, overrides);
  if (!conf.ok()) return conf.status();
  Result<KafkaHandle> handle = NewHandle(RD_KAFKA_CONSUMER, std::move(conf.value()));
  if (!handle.ok()) return handle.status();
  rd_kafka_poll_set_consumer(handle->get());
  return handle;
}

Result<int32_t> PartitionCount(rd_kafka_t* handle, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* topic_handle = rd_kafka_topic_new(handle, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(handle, 0, topic_handle, &metadata, timeout_ms);
  rd_kafka_topic_destroy(topic_handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("metadata of topic " + topic + ": " + rd_kafka_err2str(err));
  }
  Status status;
  int32_t partitions = 0;
  if (metadata->topic_cnt != 1 || metadata->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR ||
      metadata->topics[0].partition_cnt == 0) {
    const rd_kafka_resp_err_t topic_err =
        metadata->topic_cnt == 1 ? metadata->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN;
    status =
        Status::NotFound("topic " + topic + " has no partitions: " + rd_kafka_err2str(topic_err));
  } else {
    partitions = metadata->topics[0].partition_cnt;
  }
  rd_kafka_metadata_destroy(metadata);
  if (!status.ok()) return status;
  return partitions;
}

Result<std::vector<int64_t>> EndOffsets(rd_kafka_t* handle, const std::string& topic,
                                        int32_t partitions, int timeout_ms) {
  std::vector<int64_t> ends(partitions);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int32_t partition = 0; partition < partitions; ++partition) {
    int64_t low = 0;
    rd_kafka_resp_err_t err;
    // A topic created a moment ago may still be electing its leader (seen on a fresh KRaft
    // broker): retry "not leader" / "leader not available" until the timeout.
    while (true) {
      err = rd_kafka_query_watermark_offsets(handle, topic.c_str(), partition, &low,
                                             &ends[partition], timeout_ms);
      const bool electing = err == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                            err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE;
      if (!electing || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("end offset of " + topic + "/" + std::to_string(partition) + ": " +
                                 rd_kafka_err2str(err));
    }
  }
  return ends;
}

size_t ConsumeAvailable(rd_kafka_queue_t* queue, int timeout_ms,
                        std::span<rd_kafka_message_t*> batch) {
  const ssize_t ready = rd_kafka_consume_batch_queue(queue, 0, batch.data(), batch.size());
  if (ready > 0) return static_cast<size_t>(ready);
  rd_kafka_message_t* first = rd_kafka_consume_queue(queue, timeout_ms);
  if (first == nullptr) return 0;
  batch[0] = first;
  return 1;
}

Status AssignFrom(rd_kafka_t* consumer, const std::string& topic,
                  const std::vector<int64_t>& offsets) {
  PartitionList list = AllPartitions(topic, offsets);
  rd_kafka_resp_err_t err = rd_kafka_assign(consumer, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("assign " + topic + ": " + rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Result<KafkaHandle> NewConsumerAtEnd(rd_kafka_t* metadata_handle, const std::string& bootstrap,
                                     const std::string& group_id, const std::string& topic,
                                     int32_t partitions, const KafkaProperties& overrides,
                                     int timeout_ms) {
  Result<std::vector<int64_t>> ends = EndOffsets(metadata_handle, topic, partitions, timeout_ms);
  if (!ends.ok()) return ends.status();
  Result<KafkaHandle> consumer =
      NewConsumer(bootstrap, group_id, DefaultConsumerProperties(), overrides);
  if (!consumer.ok()) return consumer.status();
  Status status = AssignFrom(consumer->get(), topic, *ends);
  if (!status.ok()) return status;
  return consumer;
}

Result<std::vector<int64_t>> CommittedOffsets(rd_kafka_t* consumer, const std::string& topic,
                                              int32_t partitions, int timeout_ms) {
  PartitionList list = AllPartitions(topic, std::vector<int64_t>(partitions, -1));
  rd_kafka_resp_err_t err = rd_kafka_committed(consumer, list.get(), timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("committed offsets of " + topic + ": " + rd_kafka_err2str(err));
  }
  std::vector<int64_t> committed(partitions, -1);
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& entry = list->elems[i];
    if (entry.err != RD_KAFKA_RESP_ERR_NO_ERROR || entry.partition >= partitions) continue;
    committed[entry.partition] = entry.offset;
    if (entry.metadata == nullptr) continue;
    auto progress = plugin::ParseProgressMetadata(
        std::string(static_cast<const char*>(entry.metadata), entry.metadata_size));
    if (progress.ok() && progress->has_value()) {
      committed[entry.partition] = std::max(entry.offset, (*progress)->ingest_position);
    }
  }
  return committed;
}

Status CreateTopic(rd_kafka_t* handle, const std::string& topic, int32_t partitions,
                   const KafkaProperties& topic_configs, int timeout_ms) {
  std::array<char, 512> error{};
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, error.data(), error.size());
  if (new_topic == nullptr) {
    return Status::InvalidArgument("create topic " + topic + ": " + error.data());
  }
  for (const auto& [key, value] : topic_configs) {
    rd_kafka_NewTopic_set_config(new_topic, key.c_str(), value.c_str());
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(handle);
  rd_kafka_CreateTopics(handle, &new_topic, 1, nullptr, queue);
  rd_kafka_NewTopic_destroy(new_topic);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, timeout_ms);
  rd_kafka_queue_destroy(queue);
  if (event == nullptr) return Status::Unavailable("create topic " + topic + ": timed out");
  Status status;
  if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status =
        Status::Unavailable("create topic " + topic + ": " + rd_kafka_event_error_string(event));
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status = Status::Unavailable("create topic " + topic + ": " +
                                     rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  rd_kafka_event_destroy(event);
  return status;
}

}  // namespace delaybridge::load
