#include "tests/support/kafka_config.h"

namespace delaybridge::testing {

Result<std::unique_ptr<RdKafka::Conf>> MakeKafkaConf(const KafkaConfig& defaults,
                                                     const KafkaConfig& overrides) {
  KafkaConfig values = defaults;
  for (const auto& [name, value] : overrides) values[name] = value;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [name, value] : values) {
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("librdkafka config " + name + "=" + value + ": " + error);
    }
  }
  return conf;
}

}  // namespace delaybridge::testing
