#include "plugin/broker_check.h"

#include <librdkafka/rdkafkacpp.h>

#include <memory>

namespace delaybridge::plugin {
namespace {

// Keeps what the client reported while it tried the brokers: librdkafka's metadata request only
// says that no broker answered, while the error events say why (refused, TLS, authentication).
// An authentication or TLS error is kept over later transport errors: the broker closing the
// connection after a failed SASL exchange is reported too, and is not the cause.
class ClientErrors : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    // "All brokers are down" sums up the errors before it; it names no cause.
    if (event.type() != RdKafka::Event::EVENT_ERROR ||
        event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) {
      return;
    }
    const bool cause = event.err() == RdKafka::ERR__AUTHENTICATION ||
                       event.err() == RdKafka::ERR__SSL ||
                       event.err() == RdKafka::ERR_SASL_AUTHENTICATION_FAILED;
    if (cause_ && !cause) return;
    cause_ = cause;
    last_ = RdKafka::err2str(event.err()) + ": " + event.str();
  }
  const std::string& last() const { return last_; }

 private:
  std::string last_;
  bool cause_ = false;
};

}  // namespace

Result<BrokerCheckResult> CheckBroker(const std::map<std::string, std::string>& kafka,
                                      const std::set<std::string>& topics, int timeout_ms) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string errstr;
  for (const auto& [key, value] : kafka) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("kafka." + key + ": " + errstr);
    }
  }
  // The check's own connection errors are reported once, below, not logged as they happen.
  conf->set("log_level", "0", errstr);
  ClientErrors errors;
  if (conf->set("event_cb", &errors, errstr) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("event_cb: " + errstr);
  }
  std::unique_ptr<RdKafka::Producer> client(RdKafka::Producer::create(conf.get(), errstr));
  if (!client) return Status::InvalidArgument("create client: " + errstr);
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode err = client->metadata(true, nullptr, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (err != RdKafka::ERR_NO_ERROR) {
    client->poll(0);  // serves the error events queued while the request waited
    std::string message = "no broker of " + kafka.at("bootstrap.servers") + " answered within " +
                          std::to_string(timeout_ms) + " ms: " + RdKafka::err2str(err);
    if (!errors.last().empty()) message += " (the client reported " + errors.last() + ")";
    return Status::Unavailable(message);
  }
  BrokerCheckResult result;
  result.brokers = static_cast<int>(metadata->brokers()->size());
  std::set<std::string> present;
  for (const auto* topic : *metadata->topics()) {
    if (topic->err() == RdKafka::ERR_NO_ERROR) present.insert(topic->topic());
  }
  for (const auto& topic : topics) {
    if (!present.count(topic)) result.missing_topics.push_back(topic);
  }
  return result;
}

}  // namespace delaybridge::plugin
