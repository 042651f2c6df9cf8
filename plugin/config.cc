#include "plugin/config.h"

#include <librdkafka/rdkafkacpp.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "core/duration.h"

namespace delaybridge::plugin {

namespace {

// librdkafka properties the bridge sets itself because its guarantees depend on them.
const std::set<std::string>& BridgeOwnedKafkaKeys() {
  static const std::set<std::string> keys = {"group.id",
                                             "enable.auto.commit",
                                             "enable.auto.offset.store",
                                             "enable.idempotence",
                                             "acks",
                                             "request.required.acks",
                                             "partitioner",
                                             "transactional.id",
                                             "group.instance.id"};
  return keys;
}

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict for "\"" + std::string(s).
std::string Quote(std::string_view s) {
  std::string quoted;
  quoted.reserve(s.size() + 2);
  quoted.push_back('"');
  quoted.append(s);
  quoted.push_back('"');
  return quoted;
}

Status KeyError(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(path + ": " + what);
}

// A scalar node's text, or an error naming the path when the node is empty, a map or a list.
Result<std::string> ScalarAt(const YAML::Node& node, const std::string& path) {
  if (node.IsNull()) return KeyError(path, "must have a value");
  if (!node.IsScalar()) return KeyError(path, "must be a single value, not a list or a map");
  return node.Scalar();
}

// Parses a positive decimal integer no larger than max_value from a scalar.
Result<int64_t> PositiveAt(const YAML::Node& node, const std::string& path,
                           int64_t max_value = std::numeric_limits<int64_t>::max()) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  int64_t value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text->empty() || ec != std::errc() || ptr != end || value < 1) {
    return KeyError(path, "must be a positive integer, got " + Quote(*text));
  }
  if (value > max_value) {
    return KeyError(path, "must be at most " + std::to_string(max_value) + ", got " + Quote(*text));
  }
  return value;
}

Result<std::string> TopicAt(const YAML::Node& node, const std::string& path) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  if (text->empty()) return KeyError(path, "must be a topic name, got an empty value");
  return text;
}

// Walks a map, rejecting keys that have no handler; each handler parses its own value.
using Handler = std::function<Status(const YAML::Node&, const std::string& path)>;

Status ParseMap(const YAML::Node& node, const std::string& path,
                const std::map<std::string, Handler>& handlers) {
  if (!node.IsMap()) return KeyError(path.empty() ? "(top level)" : path, "must be a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const std::string key_path = path.empty() ? key : path + "." + key;
    auto it = handlers.find(key);
    if (it == handlers.end()) return KeyError(key_path, "unknown key");
    if (Status s = it->second(entry.second, key_path); !s.ok()) return s;
  }
  return Status::Ok();
}

// A duration value ("500ms", "1d"); errors carry the key path.
Result<int64_t> DurationAt(const YAML::Node& node, const std::string& path) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  auto ms = ParseDurationMs(*text);
  if (!ms.ok()) return KeyError(path, ms.status().message() + ", got " + Quote(*text));
  return ms;
}

Result<bool> BoolAt(const YAML::Node& node, const std::string& path) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  if (*text != "true" && *text != "false") {
    return KeyError(path, "must be true or false, got " + Quote(*text));
  }
  return *text == "true";
}

Status ParseKafka(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  if (!node.IsMap()) return KeyError(path, "must be a map of librdkafka properties");
  std::unique_ptr<RdKafka::Conf> probe(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const std::string key_path = path + "." + key;
    auto value = ScalarAt(entry.second, key_path);
    if (!value.ok()) return value.status();
    if (BridgeOwnedKafkaKeys().count(key)) {
      return KeyError(
          key_path,
          "is set by the bridge itself and cannot be overridden" +
              std::string(key == "group.id"            ? " (use group_id)"
                          : key == "group.instance.id" ? " (use group_instance_id)"
                          : key == "transactional.id"  ? " (set delivery.guarantee: exactly_once)"
                                                       : ""));
    }
    if (key == "bootstrap.servers" && *value == kEmbeddedBootstrap) {
      config->embedded = true;
      continue;
    }
    std::string errstr;
    if (probe->set(key, *value, errstr) != RdKafka::Conf::CONF_OK) {
      return KeyError(key_path, errstr);
    }
    config->kafka[key] = *value;
  }
  if (!config->embedded && !config->kafka.count("bootstrap.servers")) {
    return KeyError(path + ".bootstrap.servers", "required (a broker list, or \"embedded\")");
  }
  return Status::Ok();
}

Status ParseRoutes(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  if (!node.IsMap() || node.size() == 0) {
    return KeyError(path, "must be a non-empty map of delay topic -> target topic");
  }
  for (const auto& entry : node) {
    const std::string from = entry.first.as<std::string>();
    if (from.empty()) return KeyError(path, "a delay topic name is empty");
    auto to = TopicAt(entry.second, path + "." + from);
    if (!to.ok()) return to.status();
    config->routes[from] = *to;
  }
  return Status::Ok();
}

Status ParseAllowedTargets(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsSequence()) return KeyError(path, "must be a list of topic names");
  for (size_t i = 0; i < node.size(); ++i) {
    auto topic = TopicAt(node[i], path + "[" + std::to_string(i) + "]");
    if (!topic.ok()) return topic.status();
    config->allowed_targets.insert(*topic);
  }
  return Status::Ok();
}

Status ParseStorage(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  return ParseMap(node, path,
                  {{"dir",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto dir = ScalarAt(n, p);
                      if (!dir.ok()) return dir.status();
                      if (dir->empty()) return KeyError(p, "must be a directory path");
                      config->storage_dir = *dir;
                      return Status::Ok();
                    }},
                   {"sync_interval_ms",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 60'000);
                      if (v.ok()) config->sync_interval_ms = *v;
                      return v.status();
                    }},
                   {"checkpoint_interval_ms",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 60'000);
                      if (v.ok()) config->checkpoint_interval_ms = *v;
                      return v.status();
                    }},
                   {"max_open_hours", [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 100'000);
                      if (v.ok()) config->max_open_hours = static_cast<size_t>(*v);
                      return v.status();
                    }}});
}

Status ParseWheel(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  return ParseMap(node, path,
                  {{"tick_ms",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 1000);
                      if (v.ok()) config->tick_ms = *v;
                      return v.status();
                    }},
                   {"preload_seconds",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 3600);
                      if (v.ok()) config->preload_seconds = *v;
                      return v.status();
                    }},
                   {"max_preloaded_records", [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 100'000'000);
                      if (v.ok()) config->max_preloaded_records = static_cast<size_t>(*v);
                      return v.status();
                    }}});
}

Status ParseDelivery(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  return ParseMap(node, path,
                  {{"guarantee",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto text = ScalarAt(n, p);
                      if (!text.ok()) return text.status();
                      if (*text == "at_least_once") {
                        config->guarantee = DeliveryGuarantee::kAtLeastOnce;
                      } else if (*text == "exactly_once") {
                        config->guarantee = DeliveryGuarantee::kExactlyOnce;
                      } else {
                        return KeyError(
                            p, "must be at_least_once or exactly_once, got " + Quote(*text));
                      }
                      return Status::Ok();
                    }},
                   {"transaction_interval_ms",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 60'000);
                      if (v.ok()) config->transaction_interval_ms = *v;
                      return v.status();
                    }},
                   {"transaction_max_records",
                    [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 10'000'000);
                      if (v.ok()) config->transaction_max_records = static_cast<size_t>(*v);
                      return v.status();
                    }},
                   {"transaction_timeout_ms", [config](const YAML::Node& n, const std::string& p) {
                      auto v = PositiveAt(n, p, 900'000);
                      if (v.ok()) config->transaction_timeout_ms = *v;
                      return v.status();
                    }}});
}

Status ParseEmbedded(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  return ParseMap(node, path, {{"partitions", [config](const YAML::Node& n, const std::string& p) {
                                  auto v = PositiveAt(n, p, 1000);
                                  if (v.ok()) config->embedded_partitions = static_cast<int>(*v);
                                  return v.status();
                                }}});
}

Status ParseTopLevel(const YAML::Node& root, BridgeConfig* config) {
  BridgeConfig& c = *config;
  std::set<std::string> seen;
  auto track = [&seen](const std::string& key, Handler handler) -> Handler {
    return [&seen, key, handler](const YAML::Node& n, const std::string& p) {
      seen.insert(key);
      return handler(n, p);
    };
  };
  const std::map<std::string, Handler> handlers = {
      {"kafka", track("kafka", [&c](auto& n, auto& p) { return ParseKafka(n, p, &c); })},
      {"routes", track("routes", [&c](auto& n, auto& p) { return ParseRoutes(n, p, &c); })},
      {"allowed_targets", [&c](auto& n, auto& p) { return ParseAllowedTargets(n, p, &c); }},
      {"dead_letter_topic", track("dead_letter_topic",
                                  [&c](auto& n, auto& p) {
                                    auto t = TopicAt(n, p);
                                    if (t.ok()) c.dead_letter_topic = *t;
                                    return t.status();
                                  })},
      {"group_id",
       [&c](auto& n, auto& p) {
         auto t = TopicAt(n, p);
         if (!t.ok()) return KeyError(p, "must be a non-empty consumer group id");
         c.group_id = *t;
         return Status::Ok();
       }},
      {"group_instance_id",
       [&c](auto& n, auto& p) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         c.group_instance_id = *text;
         return Status::Ok();
       }},
      {"retention_margin",
       [&c](auto& n, auto& p) {
         auto ms = DurationAt(n, p);
         if (ms.ok()) c.retention_margin_ms = *ms;
         return ms.status();
       }},
      {"allow_unsafe_retention",
       [&c](auto& n, auto& p) {
         auto allow = BoolAt(n, p);
         if (allow.ok()) c.allow_unsafe_retention = *allow;
         return allow.status();
       }},
      {"storage", track("storage", [&c](auto& n, auto& p) { return ParseStorage(n, p, &c); })},
      {"wheel", [&c](auto& n, auto& p) { return ParseWheel(n, p, &c); }},
      {"max_delay",
       [&c](auto& n, auto& p) {
         auto ms = DurationAt(n, p);
         if (!ms.ok()) return ms.status();
         if (*ms <= 0) return KeyError(p, "must be greater than zero");
         c.max_delay_ms = *ms;
         return Status::Ok();
       }},
      {"max_record_bytes",
       [&c](auto& n, auto& p) {
         auto v = PositiveAt(n, p, 16 * 1024 * 1024);
         if (v.ok()) c.max_record_bytes = static_cast<uint32_t>(*v);
         return v.status();
       }},
      {"delivery", [&c](auto& n, auto& p) { return ParseDelivery(n, p, &c); }},
      {"embedded", [&c](auto& n, auto& p) { return ParseEmbedded(n, p, &c); }},
      {"log_level",
       [&c](auto& n, auto& p) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         auto level = ParseLogLevel(*text);
         if (!level.ok()) return level.status().WithContext(p);
         c.log_level = *level;
         return Status::Ok();
       }},
      {"stats_interval_s",
       [&c](auto& n, auto& p) {
         auto v = PositiveAt(n, p, 86'400);
         if (v.ok()) c.stats_interval_s = *v;
         return v.status();
       }},
      {"kafka_stats_file",
       [&c](auto& n, auto& p) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         if (text->empty()) return KeyError(p, "must be a file path");
         c.kafka_stats_file = *text;
         return Status::Ok();
       }},
  };
  if (Status s = ParseMap(root, "", handlers); !s.ok()) return s;
  for (const char* required : {"kafka", "routes", "dead_letter_topic", "storage"}) {
    if (!seen.count(required)) return KeyError(required, "required");
  }
  if (c.storage_dir.empty()) return KeyError("storage.dir", "required");
  return Status::Ok();
}

// Rejects topic loops: a delay topic that is also an output would feed the bridge its own
// deliveries.
Status CheckTopicGraph(const BridgeConfig& c) {
  const std::set<std::string> outputs = c.OutputTopics();
  for (const auto& [from, to] : c.routes) {
    if (outputs.count(from)) {
      return KeyError("routes." + from,
                      "delay topic \"" + from +
                          "\" is also a target or the dead_letter_topic; that would loop");
    }
  }
  return Status::Ok();
}

// librdkafka's statistics are written to kafka_stats_file; either one alone is a mistake that
// would silently drop them or never produce any.
Status CheckKafkaStats(const BridgeConfig& c) {
  const auto interval = c.kafka.find("statistics.interval.ms");
  const bool enabled = interval != c.kafka.end() && interval->second != "0";
  if (enabled && c.kafka_stats_file.empty()) {
    return KeyError("kafka.statistics.interval.ms",
                    "needs kafka_stats_file: the bridge writes librdkafka's statistics there");
  }
  if (!enabled && !c.kafka_stats_file.empty()) {
    return KeyError("kafka_stats_file",
                    "needs kafka.statistics.interval.ms (the period of the statistics, e.g. 1000)");
  }
  return Status::Ok();
}

// Exactly-once needs real transactions, and a transaction must outlive the interval between
// commits with room for a slow commit.
Status CheckDelivery(const BridgeConfig& c) {
  if (!c.exactly_once()) return Status::Ok();
  if (c.embedded) {
    return KeyError("delivery.guarantee",
                    "exactly_once needs a real Kafka cluster: the embedded broker (librdkafka's "
                    "mock cluster) only imitates transactions");
  }
  if (auto it = c.kafka.find("isolation.level");
      it != c.kafka.end() && it->second != "read_committed") {
    return KeyError("kafka.isolation.level",
                    "must be read_committed with delivery.guarantee exactly_once: the committed "
                    "progress is read only once the transactions holding it are settled");
  }
  if (c.transaction_timeout_ms < 1000 + 2 * c.transaction_interval_ms) {
    return KeyError("delivery.transaction_timeout_ms",
                    "must be at least 1000 + 2 x delivery.transaction_interval_ms (" +
                        std::to_string(1000 + 2 * c.transaction_interval_ms) + ")");
  }
  return Status::Ok();
}

// A record the bridge accepts must fit in what its producer may send, or it could never be
// delivered.
Status CheckRecordSize(BridgeConfig* c) {
  if (auto it = c->kafka.find("message.max.bytes"); it != c->kafka.end()) {
    c->producer_message_max_bytes = std::stoll(it->second);  // librdkafka checked the range
  }
  if (c->max_record_bytes + int64_t{kDeliveryFramingBytes} > c->producer_message_max_bytes) {
    return KeyError("max_record_bytes",
                    std::to_string(c->max_record_bytes) + " does not fit in the producer's " +
                        "message.max.bytes " + std::to_string(c->producer_message_max_bytes) +
                        " less " + std::to_string(kDeliveryFramingBytes) +
                        " bytes of framing: lower it, or raise kafka.message.max.bytes (and the "
                        "topics' max.message.bytes)");
  }
  return Status::Ok();
}

}  // namespace

std::set<std::string> BridgeConfig::OutputTopics() const {
  std::set<std::string> topics = allowed_targets;
  for (const auto& [from, to] : routes) topics.insert(to);
  topics.insert(dead_letter_topic);
  return topics;
}

std::string DefaultGroupInstanceId(const std::string& storage_dir) {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) std::snprintf(host, sizeof(host), "unknown");
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(storage_dir, ec).lexically_normal();
  // "dir/" and "dir" are the same directory.
  if (!path.has_filename() && path != path.root_path()) path = path.parent_path();
  const std::string dir = path.string();
  uint64_t hash = 14695981039346656037ull;  // FNV-1a: stable across builds and runs
  for (unsigned char ch : dir) hash = (hash ^ ch) * 1099511628211ull;
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(hash));
  return std::string("delaybridge-") + host + "-" + suffix;
}

Result<BridgeConfig> ParseConfig(const std::string& yaml_text) {
  BridgeConfig config;
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    if (root.IsNull()) return Status::InvalidArgument("the configuration is empty");
    if (Status s = ParseTopLevel(root, &config); !s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("YAML syntax error at line " + std::to_string(e.mark.line + 1) +
                                   ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (Status s = CheckTopicGraph(config); !s.ok()) return s;
  if (Status s = CheckKafkaStats(config); !s.ok()) return s;
  if (Status s = CheckDelivery(config); !s.ok()) return s;
  if (Status s = CheckRecordSize(&config); !s.ok()) return s;
  return config;
}

Result<BridgeConfig> LoadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto config = ParseConfig(text.str());
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

bool IsSecretKafkaKey(std::string_view key) {
  // ssl.* and sasl.* hold keys, certificates, tokens and extensions; these few name a mechanism,
  // a user or a file and are shown.
  static constexpr std::string_view kShown[] = {
      "sasl.mechanism",          "sasl.mechanisms",
      "sasl.username",           "sasl.kerberos.service.name",
      "sasl.kerberos.principal", "sasl.kerberos.kinit.cmd",
      "sasl.kerberos.keytab",    "sasl.oauthbearer.method",
      "sasl.oauthbearer.scope",  "sasl.oauthbearer.token.endpoint.url",
      "ssl.ca.location",         "ssl.certificate.location",
      "ssl.key.location",        "ssl.keystore.location",
      "ssl.crl.location",        "ssl.endpoint.identification.algorithm",
      "ssl.cipher.suites",       "ssl.curves.list",
      "ssl.sigalgs.list",        "ssl.providers",
      "ssl.engine.location",     "enable.ssl.certificate.verification"};
  for (const std::string_view shown : kShown) {
    if (key == shown) return false;
  }
  for (const std::string_view word : {"password", "secret", "token", "credential", "jaas"}) {
    if (key.find(word) != std::string_view::npos) return true;
  }
  return key.starts_with("ssl.") || key.starts_with("sasl.") || key.starts_with("ssl_");
}

std::string DescribeConfig(const BridgeConfig& c) {
  std::ostringstream out;
  out << "group_id=" << c.group_id << " routes={";
  const char* sep = "";
  for (const auto& [from, to] : c.routes) {
    out << sep << from << "->" << to;
    sep = ", ";
  }
  out << "} allowed_targets=[";
  sep = "";
  for (const auto& t : c.allowed_targets) {
    out << sep << t;
    sep = ", ";
  }
  out << "] dead_letter_topic=" << c.dead_letter_topic << " storage.dir=" << c.storage_dir
      << " storage.sync_interval_ms=" << c.sync_interval_ms
      << " storage.checkpoint_interval_ms=" << c.checkpoint_interval_ms
      << " wheel.tick_ms=" << c.tick_ms << " wheel.preload_seconds=" << c.preload_seconds
      << " wheel.max_preloaded_records=" << c.max_preloaded_records
      << " max_delay_ms=" << c.max_delay_ms << " max_record_bytes=" << c.max_record_bytes
      << " producer message.max.bytes=" << c.producer_message_max_bytes
      << " retention_margin_ms=" << c.retention_margin_ms
      << " allow_unsafe_retention=" << (c.allow_unsafe_retention ? "true" : "false")
      << " delivery.guarantee=" << (c.exactly_once() ? "exactly_once" : "at_least_once");
  if (c.exactly_once()) {
    out << " delivery.transaction_interval_ms=" << c.transaction_interval_ms
        << " delivery.transaction_timeout_ms=" << c.transaction_timeout_ms
        << " delivery.transaction_max_records=" << c.transaction_max_records;
  }
  out << " group_instance_id="
      << (!c.group_instance_id           ? "(derived)"
          : c.group_instance_id->empty() ? "(none)"
                                         : *c.group_instance_id);
  if (!c.kafka_stats_file.empty()) out << " kafka_stats_file=" << c.kafka_stats_file;
  out << " kafka{";
  sep = "";
  // "key: value" (not key=value) so that the embedded banner stays the only line of output
  // containing "bootstrap.servers=".
  if (c.embedded) {
    out << "bootstrap.servers: embedded";
    sep = ", ";
  }
  for (const auto& [key, value] : c.kafka) {
    out << sep << key << ": " << (IsSecretKafkaKey(key) ? "***" : value);
    sep = ", ";
  }
  out << "}";
  return out.str();
}

}  // namespace delaybridge::plugin
