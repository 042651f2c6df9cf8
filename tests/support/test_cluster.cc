#include "tests/support/test_cluster.h"

#include <cstdlib>

namespace delaybridge::testing {

Result<std::unique_ptr<TestCluster>> TestCluster::Create() {
  std::unique_ptr<TestCluster> c(new TestCluster());
  const char* external = std::getenv("DELAYBRIDGE_TEST_BOOTSTRAP");
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (external && *external) {
    c->bootstrap_ = external;
    rd_kafka_conf_set(conf, "bootstrap.servers", external, errstr, sizeof(errstr));
  } else {
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
  }
  c->client_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!c->client_) {
    rd_kafka_conf_destroy(conf);
    return Status::Unavailable(std::string("test cluster client: ") + errstr);
  }
  if (!c->bootstrap_.empty()) return c;
  c->mock_ = rd_kafka_mock_cluster_new(c->client_, 1);
  if (!c->mock_) return Status::Unavailable("rd_kafka_mock_cluster_new failed");
  c->bootstrap_ = rd_kafka_mock_cluster_bootstraps(c->mock_);
  return c;
}

TestCluster::~TestCluster() {
  if (mock_) rd_kafka_mock_cluster_destroy(mock_);
  if (client_) rd_kafka_destroy(client_);
}

Status TestCluster::CreateTopic(const std::string& name, int partitions) {
  if (!mock_) return CreateExternalTopic(name, partitions);
  const rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mock_, name.c_str(), partitions, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("mock create topic " + name + ": " + rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Status TestCluster::SetBrokerDown(bool down) {
  if (!mock_) return Status::FailedPrecondition("broker outages need the mock cluster");
  // The mock cluster numbers its brokers from 1.
  const rd_kafka_resp_err_t err =
      down ? rd_kafka_mock_broker_set_down(mock_, 1) : rd_kafka_mock_broker_set_up(mock_, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("mock broker set ") + (down ? "down" : "up") + ": " +
                               rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Status TestCluster::SetPartitionLed(const std::string& topic, int partition, bool leader) {
  if (!mock_) return Status::FailedPrecondition("leaderless partitions need the mock cluster");
  const rd_kafka_resp_err_t err =
      rd_kafka_mock_partition_set_leader(mock_, topic.c_str(), partition, leader ? 1 : -1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable("mock partition set leader: " + std::string(rd_kafka_err2str(err)));
  }
  return Status::Ok();
}

Status TestCluster::CreateExternalTopic(const std::string& name, int partitions) {
  char errstr[512];
  rd_kafka_NewTopic_t* topic =
      rd_kafka_NewTopic_new(name.c_str(), partitions, 1, errstr, sizeof(errstr));
  if (!topic) return Status::InvalidArgument("new topic " + name + ": " + errstr);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client_);
  rd_kafka_CreateTopics(client_, &topic, 1, nullptr, queue);
  rd_kafka_NewTopic_destroy(topic);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30'000);
  Status status = Status::Ok();
  if (!event) {
    status = Status::Unavailable("create topic " + name + ": no answer within 30 s");
  } else if (rd_kafka_event_error(event)) {
    status =
        Status::Unavailable("create topic " + name + ": " + rd_kafka_event_error_string(event));
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        status = Status::Unavailable("create topic " + name + ": " + rd_kafka_err2str(err));
      }
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  return status;
}

}  // namespace delaybridge::testing
