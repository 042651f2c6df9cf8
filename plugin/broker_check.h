// Broker check: what `delaybridge --check` does after the configuration parsed. It asks the
// brokers for cluster metadata with the configured client properties (so TLS/SASL settings
// are exercised too) and reports which configured topics are missing.
//
// Thread-safety: a blocking free function; call it from one thread.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::plugin {

struct BrokerCheckResult {
  int brokers = 0;
  std::vector<std::string> missing_topics;
};

// Unavailable when no broker answered within timeout_ms.
Result<BrokerCheckResult> CheckBroker(const std::map<std::string, std::string>& kafka,
                                      const std::set<std::string>& topics, int timeout_ms);

}  // namespace delaybridge::plugin
