// EmbeddedCluster: librdkafka's in-process mock broker, started when the configuration says
// bootstrap.servers: embedded, so a newcomer can try the bridge without a Kafka of their
// own. It lives as long as this object (data is in memory only) and listens on 127.0.0.1.
//
// Thread-safety: create and destroy on one thread; the mock broker runs on its own
// librdkafka threads.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <set>
#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

class EmbeddedCluster {
 public:
  // Starts a one-broker cluster and creates topics with `partitions` partitions each.
  static Result<std::unique_ptr<EmbeddedCluster>> Start(const std::set<std::string>& topics,
                                                        int partitions);
  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  // "127.0.0.1:PORT".
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

 private:
  EmbeddedCluster() = default;

  rd_kafka_t* host_ = nullptr;  // the mock cluster is owned by (and dies with) a client handle
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_servers_;
};

// The banner printed at start: one line containing bootstrap.servers=HOST:PORT, then
// ready-to-paste kcat commands producing a record delayed by 5 s and watching the target.
std::string EmbeddedBanner(const std::string& bootstrap_servers, const std::string& delay_topic,
                           const std::string& target_topic);

}  // namespace delaybridge::plugin
