// KafkaConfig: librdkafka properties as name -> value, and the librdkafka configuration object
// made from them, for the tests' own clients.
//
// Thread-safety: pure functions.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <memory>
#include <string>

#include "core/status.h"

namespace delaybridge::testing {

using KafkaConfig = std::map<std::string, std::string>;

// A global librdkafka configuration with defaults, then overrides (overrides win); an error
// names the property librdkafka refused.
Result<std::unique_ptr<RdKafka::Conf>> MakeKafkaConf(const KafkaConfig& defaults,
                                                     const KafkaConfig& overrides);

}  // namespace delaybridge::testing
