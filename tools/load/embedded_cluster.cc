#include "tools/load/embedded_cluster.h"

#include <array>

namespace delaybridge::load {

EmbeddedCluster::EmbeddedCluster(KafkaHandle host, rd_kafka_mock_cluster_t* cluster)
    : host_(std::move(host)),
      cluster_(cluster),
      bootstrap_(rd_kafka_mock_cluster_bootstraps(cluster)) {}

EmbeddedCluster::~EmbeddedCluster() { rd_kafka_mock_cluster_destroy(cluster_); }

Result<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(
    const std::vector<std::string>& topics, int partitions) {
  std::array<char, 512> error{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_t* host = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size());
  if (host == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Unavailable(std::string("embedded cluster: create host client: ") +
                               error.data());
  }
  KafkaHandle host_handle(host);
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(host, 1);
  if (cluster == nullptr) return Status::Unavailable("embedded cluster: could not start");
  std::unique_ptr<EmbeddedCluster> embedded(new EmbeddedCluster(std::move(host_handle), cluster));
  for (const std::string& topic : topics) {
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster, topic.c_str(), partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("embedded cluster: create topic " + topic + ": " +
                                 rd_kafka_err2str(err));
    }
  }
  return embedded;
}

}  // namespace delaybridge::load
