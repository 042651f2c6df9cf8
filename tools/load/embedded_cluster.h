// EmbeddedCluster: librdkafka's in-process mock cluster, for `--bootstrap embedded`, so the
// tool (and its passthrough baseline) runs on a machine with no Kafka at all. It listens on a
// real loopback port, so another process (a DelayBridge) can be pointed at it too.
//
// Thread-safety: construct and destroy on one thread; the cluster runs on librdkafka's threads.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tools/load/kafka_client.h"

namespace delaybridge::load {

class EmbeddedCluster {
 public:
  // Starts a one-broker cluster holding `topics`, each with `partitions` partitions.
  static Result<std::unique_ptr<EmbeddedCluster>> Start(const std::vector<std::string>& topics,
                                                        int partitions);
  ~EmbeddedCluster();
  EmbeddedCluster(const EmbeddedCluster&) = delete;
  EmbeddedCluster& operator=(const EmbeddedCluster&) = delete;

  // "127.0.0.1:PORT"
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  EmbeddedCluster(KafkaHandle host, rd_kafka_mock_cluster_t* cluster);

  KafkaHandle host_;  // the client instance the mock cluster lives in
  rd_kafka_mock_cluster_t* cluster_;
  std::string bootstrap_;
};

}  // namespace delaybridge::load
