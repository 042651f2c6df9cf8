#include "plugin/embedded_cluster.h"

namespace delaybridge::plugin {

Result<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(const std::set<std::string>& topics,
                                                                int partitions) {
  std::unique_ptr<EmbeddedCluster> c(new EmbeddedCluster());
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The host handle never talks to a broker; silence its logs about having none.
  if (rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("embedded broker: ") + errstr);
  }
  c->host_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!c->host_) {
    rd_kafka_conf_destroy(conf);
    return Status::Unavailable(std::string("embedded broker host: ") + errstr);
  }
  c->cluster_ = rd_kafka_mock_cluster_new(c->host_, 1);
  if (!c->cluster_) return Status::Unavailable("embedded broker: rd_kafka_mock_cluster_new failed");
  c->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(c->cluster_);
  for (const auto& topic : topics) {
    const rd_kafka_resp_err_t err =
        rd_kafka_mock_topic_create(c->cluster_, topic.c_str(), partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("embedded broker: create topic " + topic + ": " +
                                 rd_kafka_err2str(err));
    }
  }
  return c;
}

EmbeddedCluster::~EmbeddedCluster() {
  if (cluster_) rd_kafka_mock_cluster_destroy(cluster_);
  if (host_) rd_kafka_destroy(host_);
}

std::string EmbeddedBanner(const std::string& bootstrap_servers, const std::string& delay_topic,
                           const std::string& target_topic) {
  const std::string b = bootstrap_servers;
  return "embedded Kafka broker ready: bootstrap.servers=" + b +
         " (in-process, in memory: its topics vanish when the bridge stops)\n"
         "  watch the target topic:\n"
         "    kcat -b " +
         b + " -C -t " + target_topic +
         " -o beginning -f 'delivered at %T: key=%k value=%s headers=%h\\n'\n"
         "  produce a record to be delivered in 5 seconds:\n"
         "    echo hello | kcat -b " +
         b + " -P -t " + delay_topic + " -k greeting -H x-delay=5000\n";
}

}  // namespace delaybridge::plugin
