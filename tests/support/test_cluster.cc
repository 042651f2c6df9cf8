#include "tests/support/test_cluster.h"

#include <cstdlib>

namespace delaybridge::testing {

Result<std::string> RealBrokerBootstrap() {
  const char* value = std::getenv(kBootstrapEnv);
  if (value == nullptr || *value == '\0') {
    std::string message = kBootstrapEnv;
    message += " is not set: run these tests through ctest (the kafka fixture starts a broker) ";
    message += "or start one with scripts/kafka.sh up and export ";
    message += kBootstrapEnv;
    message += "=127.0.0.1:39092";
    return Status::FailedPrecondition(message);
  }
  return std::string(value);
}

Result<std::unique_ptr<TestCluster>> TestCluster::Create(ClusterKind kind) {
  std::unique_ptr<TestCluster> c(new TestCluster());
  Result<std::string> real = RealBrokerBootstrap();
  if (real.ok()) {
    c->bootstrap_ = *real;
    return c;
  }
  if (kind == ClusterKind::kRealBroker) return real.status();
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
  c->client_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!c->client_) {
    rd_kafka_conf_destroy(conf);
    return Status::Unavailable(std::string("mock cluster host: ") + errstr);
  }
  c->mock_ = rd_kafka_mock_cluster_new(c->client_, 1);
  if (!c->mock_) return Status::Unavailable("rd_kafka_mock_cluster_new failed");
  c->bootstrap_ = rd_kafka_mock_cluster_bootstraps(c->mock_);
  return c;
}

TestCluster::~TestCluster() {
  if (mock_) rd_kafka_mock_cluster_destroy(mock_);
  if (client_) rd_kafka_destroy(client_);
}

Status TestCluster::CreateTopics(const std::vector<TopicSpec>& topics) {
  if (!mock_) return testing::CreateTopics(bootstrap_, topics);
  for (const TopicSpec& topic : topics) {
    if (!topic.configs.empty()) {
      return Status::FailedPrecondition("topic " + topic.name +
                                        ": the mock cluster takes no topic configs");
    }
    const rd_kafka_resp_err_t err =
        rd_kafka_mock_topic_create(mock_, topic.name.c_str(), topic.partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("mock create topic " + topic.name + ": " + rd_kafka_err2str(err));
    }
  }
  return Status::Ok();
}

Status TestCluster::SetBrokerDown(bool down) {
  Status changed = mock_ ? SetMockBrokerDown(down) : RunKafkaScript(down ? "stop" : "start");
  if (changed.ok()) broker_down_ = down;
  return changed;
}

Status TestCluster::SetMockBrokerDown(bool down) {
  // The mock cluster numbers its brokers from 1.
  const rd_kafka_resp_err_t err =
      down ? rd_kafka_mock_broker_set_down(mock_, 1) : rd_kafka_mock_broker_set_up(mock_, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("mock broker set ") + (down ? "down" : "up") + ": " +
                               rd_kafka_err2str(err));
  }
  return Status::Ok();
}

Status TestCluster::RunKafkaScript(const std::string& command) {
  const char* script = std::getenv("DELAYBRIDGE_KAFKA_SCRIPT");
  if (script == nullptr) {
    return Status::FailedPrecondition("DELAYBRIDGE_KAFKA_SCRIPT is not set (run through ctest)");
  }
  // kafka.sh reads KAFKA_PORT and KAFKA_STATE_DIR from the environment CTest set.
  std::string line = "bash '";
  line += script;
  line += "' ";
  line += command;
  const int status = std::system(line.c_str());
  if (status != 0) {
    return Status::Unavailable(line + ": wait status " + std::to_string(status));
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

Status TestCluster::PushRequestErrors(int16_t api_key,
                                      const std::vector<rd_kafka_resp_err_t>& errors) {
  if (!mock_) return Status::FailedPrecondition("injected request errors need the mock cluster");
  rd_kafka_mock_push_request_errors_array(mock_, api_key, errors.size(), errors.data());
  return Status::Ok();
}

}  // namespace delaybridge::testing
