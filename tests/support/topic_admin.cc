#include "tests/support/topic_admin.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "tests/support/kafka_config.h"

namespace delaybridge::testing {
namespace {

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

// Sends the CreateTopics request and waits for its answer.
Status RequestTopics(rd_kafka_t* rk, const std::vector<TopicSpec>& topics) {
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
        std::string message = "create topic ";
        message += rd_kafka_topic_result_name(results[i]);
        message += ": ";
        message += rd_kafka_topic_result_error_string(results[i]);
        status = Status::Unavailable(message);
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy_array(new_topics.data(), new_topics.size());
  return status;
}

}  // namespace

Status CreateTopics(const std::string& bootstrap, const std::vector<TopicSpec>& topics) {
  auto conf = MakeKafkaConf({{"bootstrap.servers", bootstrap}}, {});
  if (!conf.ok()) return conf.status();
  std::string error;
  std::unique_ptr<RdKafka::Producer> handle(RdKafka::Producer::create(conf->get(), error));
  if (!handle) return Status::Unavailable("admin client: " + error);
  if (Status requested = RequestTopics(handle->c_ptr(), topics); !requested.ok()) {
    return requested;
  }
  // CreateTopics returns once the controller accepted them; leaders follow shortly after.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    Result<bool> ready = TopicsReady(*handle, topics);
    if (ready.ok() && *ready) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Unavailable("created topics have no leader after 30 s");
}

std::string UniqueName(std::string_view prefix) {
  static std::atomic<int> counter{0};
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(ns) + "-" +
         std::to_string(counter++);
}

}  // namespace delaybridge::testing
