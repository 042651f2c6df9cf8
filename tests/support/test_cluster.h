// TestCluster: the Kafka a test talks to. By default an in-process librdkafka mock cluster
// (fast, no JVM); when DELAYBRIDGE_TEST_BOOTSTRAP is set, the external broker at that address
// (the real-broker tests set it). Either way the test gets a bootstrap address and can create
// topics; child processes (the bridge) reach the mock cluster over 127.0.0.1 too.
//
// Thread-safety: create topics from one thread; the mock cluster runs on its own threads.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <string>

#include "core/status.h"

namespace delaybridge::testing {

class TestCluster {
 public:
  static Result<std::unique_ptr<TestCluster>> Create();
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  bool external() const { return mock_ == nullptr; }

  // Creates a topic (replication factor 1). On an external broker this goes through the admin
  // API and waits for the result.
  Status CreateTopic(const std::string& name, int partitions);

  // Mock cluster only: disconnects the broker and refuses connections (down = true), or lets
  // clients back in. FailedPrecondition on an external broker.
  Status SetBrokerDown(bool down);
  // Mock cluster only: takes the partition's leader away (leader = false), so records for it
  // wait in the producer, or gives it back.
  Status SetPartitionLed(const std::string& topic, int partition, bool leader);

 private:
  TestCluster() = default;
  Status CreateExternalTopic(const std::string& name, int partitions);

  rd_kafka_t* client_ = nullptr;  // hosts the mock cluster, or issues admin requests
  rd_kafka_mock_cluster_t* mock_ = nullptr;
  std::string bootstrap_;
};

}  // namespace delaybridge::testing
