#include "plugin/retention_check.h"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <memory>

namespace delaybridge::plugin {

namespace {

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};

int64_t ParseLong(const char* text) {
  int64_t value = -1;
  if (text == nullptr) return value;
  const std::string_view s(text);
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

std::string Duration(int64_t ms) {
  if (ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  return std::to_string(ms) + "ms";
}

Result<std::unique_ptr<rd_kafka_t, HandleDeleter>> MakeClient(
    const std::map<std::string, std::string>& kafka) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [key, value] : kafka) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument("kafka." + key + ": " + errstr);
    }
  }
  rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("create admin client: ") + errstr);
  }
  return std::unique_ptr<rd_kafka_t, HandleDeleter>(rk);
}

}  // namespace

Result<std::vector<TopicRetention>> DescribeRetention(
    const std::map<std::string, std::string>& kafka, const std::set<std::string>& topics,
    int timeout_ms) {
  auto client = MakeClient(kafka);
  if (!client.ok()) return client.status();
  rd_kafka_t* rk = client->get();
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  std::vector<rd_kafka_ConfigResource_t*> resources;
  for (const auto& topic : topics) {
    resources.push_back(rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str()));
  }
  rd_kafka_AdminOptions_t* options =
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  char errstr[512];
  rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, errstr, sizeof(errstr));
  rd_kafka_DescribeConfigs(rk, resources.data(), resources.size(), options, queue.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_ConfigResource_destroy_array(resources.data(), resources.size());

  std::unique_ptr<rd_kafka_event_t, EventDeleter> event(
      rd_kafka_queue_poll(queue.get(), timeout_ms + 1000));
  if (!event) {
    return Status::Unavailable("describe configs of the delay topics: no answer within " +
                               std::to_string(timeout_ms) + " ms");
  }
  if (rd_kafka_resp_err_t err = rd_kafka_event_error(event.get()); err) {
    const std::string what = std::string("describe configs of the delay topics: ") +
                             rd_kafka_event_error_string(event.get());
    if (err == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE ||
        err == RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION) {
      return Status::FailedPrecondition(what);
    }
    return Status::Unavailable(what);
  }
  const rd_kafka_DescribeConfigs_result_t* result =
      rd_kafka_event_DescribeConfigs_result(event.get());
  size_t count = 0;
  const rd_kafka_ConfigResource_t** described =
      rd_kafka_DescribeConfigs_result_resources(result, &count);
  std::vector<TopicRetention> retentions;
  for (size_t i = 0; i < count; ++i) {
    const std::string topic = rd_kafka_ConfigResource_name(described[i]);
    if (rd_kafka_resp_err_t err = rd_kafka_ConfigResource_error(described[i]); err) {
      const std::string what = "describe configs of topic " + topic + ": " +
                               rd_kafka_ConfigResource_error_string(described[i]);
      if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) return Status::NotFound(what);
      return Status::Unavailable(what);
    }
    TopicRetention r;
    r.topic = topic;
    size_t entries = 0;
    const rd_kafka_ConfigEntry_t** configs =
        rd_kafka_ConfigResource_configs(described[i], &entries);
    for (size_t j = 0; j < entries; ++j) {
      const std::string name = rd_kafka_ConfigEntry_name(configs[j]);
      const char* value = rd_kafka_ConfigEntry_value(configs[j]);
      if (name == "retention.ms") r.retention_ms = ParseLong(value);
      if (name == "retention.bytes") r.retention_bytes = ParseLong(value);
      if (name == "cleanup.policy" && value != nullptr) r.cleanup_policy = value;
    }
    retentions.push_back(std::move(r));
  }
  return retentions;
}

std::vector<std::string> RetentionProblems(const std::vector<TopicRetention>& topics,
                                           int64_t max_delay_ms, int64_t margin_ms) {
  std::vector<std::string> problems;
  const int64_t needed_ms = max_delay_ms + margin_ms;
  for (const auto& t : topics) {
    const std::string fix = " (kafka-configs.sh --alter --entity-type topics --entity-name " +
                            t.topic + " --add-config ";
    if (t.cleanup_policy.find("compact") != std::string::npos) {
      problems.push_back("delay topic " + t.topic + " has cleanup.policy=" + t.cleanup_policy +
                         ": compaction can delete a record before it is delivered; set "
                         "cleanup.policy=delete" +
                         fix + "cleanup.policy=delete)");
    }
    if (t.retention_ms >= 0 && t.retention_ms < needed_ms) {
      problems.push_back("delay topic " + t.topic +
                         " has retention.ms=" + std::to_string(t.retention_ms) + " (" +
                         Duration(t.retention_ms) + "), shorter than max_delay " +
                         Duration(max_delay_ms) + " + retention_margin " + Duration(margin_ms) +
                         ": a record could be deleted before it is due; set retention.ms=-1 or "
                         "at least " +
                         std::to_string(needed_ms) + fix +
                         "retention.ms=-1), "
                         "or lower max_delay");
    }
    if (t.retention_bytes >= 0) {
      problems.push_back("delay topic " + t.topic +
                         " has retention.bytes=" + std::to_string(t.retention_bytes) +
                         ": size-based retention can delete a record before it is due; set "
                         "retention.bytes=-1" +
                         fix + "retention.bytes=-1)");
    }
  }
  return problems;
}

}  // namespace delaybridge::plugin
