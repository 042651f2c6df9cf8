// TestCluster: the Kafka a test talks to, chosen by ClusterKind: an in-process librdkafka mock
// cluster (fast, no JVM), or the real broker at DELAYBRIDGE_TEST_BOOTSTRAP (CTest's kafka
// fixture starts it for the real-broker tests). Either way the test gets a bootstrap address,
// creates topics and can take the broker away; child processes (the bridge) reach the mock
// cluster over 127.0.0.1 too.
//
// Thread-safety: one test thread; the mock cluster runs on its own threads.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "tests/support/topic_admin.h"

namespace delaybridge::testing {

// The environment variable CTest sets (from the kafka fixture) to the real broker's host:port.
inline constexpr const char* kBootstrapEnv = "DELAYBRIDGE_TEST_BOOTSTRAP";

enum class ClusterKind {
  kMockUnlessEnvironment,  // the mock cluster, or the real broker when kBootstrapEnv is set
  kRealBroker,             // the real broker; an error when kBootstrapEnv is not set
};

// The real broker's address from kBootstrapEnv, or an error saying how to get one.
Result<std::string> RealBrokerBootstrap();

class TestCluster {
 public:
  static Result<std::unique_ptr<TestCluster>> Create(
      ClusterKind kind = ClusterKind::kMockUnlessEnvironment);
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  bool external() const { return mock_ == nullptr; }

  // Creates topics (replication factor 1). On the real broker through the admin API, waiting
  // until every partition is led; the mock cluster takes no topic configs.
  Status CreateTopics(const std::vector<TopicSpec>& topics);
  Status CreateTopic(const std::string& name, int partitions) {
    return CreateTopics({{name, partitions}});
  }

  // Takes the broker away (down = true) or brings it back. The mock cluster disconnects its
  // broker and refuses connections; the real broker is stopped and started on the same data
  // dir and port by scripts/kafka.sh (at DELAYBRIDGE_KAFKA_SCRIPT, CTest sets it).
  Status SetBrokerDown(bool down);
  bool broker_down() const { return broker_down_; }
  // Mock cluster only: takes the partition's leader away (leader = false), so records for it
  // wait in the producer, or gives it back.
  Status SetPartitionLed(const std::string& topic, int partition, bool leader);
  // Mock cluster only: the next errors.size() requests of this API (RD_KAFKAP_*), from any
  // client, are answered with these errors, in order.
  Status PushRequestErrors(int16_t api_key, const std::vector<rd_kafka_resp_err_t>& errors);

 private:
  TestCluster() = default;
  Status SetMockBrokerDown(bool down);
  static Status RunKafkaScript(const std::string& command);

  rd_kafka_t* client_ = nullptr;  // hosts the mock cluster
  rd_kafka_mock_cluster_t* mock_ = nullptr;
  std::string bootstrap_;
  bool broker_down_ = false;
};

}  // namespace delaybridge::testing
