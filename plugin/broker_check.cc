#include "plugin/broker_check.h"

#include <librdkafka/rdkafkacpp.h>

#include <memory>

namespace delaybridge::plugin {

Result<BrokerCheckResult> CheckBroker(const std::map<std::string, std::string>& kafka,
                                      const std::set<std::string>& topics, int timeout_ms) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string errstr;
  for (const auto& [key, value] : kafka) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("kafka." + key + ": " + errstr);
    }
  }
  // The check's own connection errors are reported once, below, not logged as they happen.
  conf->set("log_level", "0", errstr);
  std::unique_ptr<RdKafka::Producer> client(RdKafka::Producer::create(conf.get(), errstr));
  if (!client) return Status::InvalidArgument("create client: " + errstr);
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode err = client->metadata(true, nullptr, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("no broker of " + kafka.at("bootstrap.servers") +
                               " answered within " + std::to_string(timeout_ms) +
                               " ms: " + RdKafka::err2str(err));
  }
  BrokerCheckResult result;
  result.brokers = static_cast<int>(metadata->brokers()->size());
  std::set<std::string> present;
  for (const auto* topic : *metadata->topics()) {
    if (topic->err() == RdKafka::ERR_NO_ERROR) present.insert(topic->topic());
  }
  for (const auto& topic : topics) {
    if (!present.count(topic)) result.missing_topics.push_back(topic);
  }
  return result;
}

}  // namespace delaybridge::plugin
