#include "plugin/config.h"

#include <fcntl.h>
#include <librdkafka/rdkafkacpp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>
#include <vector>

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

// Why a name Kafka cannot hold is refused (Apache Kafka's Topic.validate: 1-249 characters of
// [a-zA-Z0-9._-], not "." or ".."), or nothing. Checked at load: a record for a topic that cannot
// exist would otherwise be retried forever, since librdkafka refuses a name over 512 bytes as an
// invalid argument, not as a topic the broker lacks.
std::optional<std::string> TopicNameProblem(const std::string& name) {
  constexpr size_t kMaxTopicNameLength = 249;
  if (name.empty()) return "must be a topic name, got an empty value";
  if (name.size() > kMaxTopicNameLength) {
    return "a topic name is at most " + std::to_string(kMaxTopicNameLength) + " characters, got " +
           std::to_string(name.size());
  }
  if (name == "." || name == "..") return "a topic name cannot be \"" + name + "\"";
  const auto legal = [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  };
  if (!std::all_of(name.begin(), name.end(), legal)) {
    return "a topic name has only the characters a-z, A-Z, 0-9, '.', '_' and '-', got " +
           Quote(name);
  }
  return std::nullopt;
}

Result<std::string> TopicAt(const YAML::Node& node, const std::string& path) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  if (auto problem = TopicNameProblem(*text)) return KeyError(path, *problem);
  return text;
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

bool IsEnvironmentName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
  });
}

// text with every ${NAME} replaced by the environment variable NAME, so that secrets can stay
// out of the configuration file.
Result<std::string> ExpandEnvironment(const std::string& text, const std::string& path) {
  std::string out;
  size_t pos = 0;
  for (size_t start = text.find("${"); start != std::string::npos; start = text.find("${", pos)) {
    const size_t end = text.find('}', start + 2);
    if (end == std::string::npos) return KeyError(path, "has \"${\" without a closing \"}\"");
    const std::string name = text.substr(start + 2, end - start - 2);
    if (!IsEnvironmentName(name)) {
      return KeyError(path, "${" + name + "} does not name an environment variable");
    }
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return KeyError(path, "environment variable " + name + " is not set");
    out.append(text, pos, start - pos);
    out += value;
    pos = end + 1;
  }
  out.append(text, pos);
  return out;
}

// The content of a regular file of at most max_bytes. A directory, a FIFO or a device is refused
// before it is read: none of them holds a configuration or a secret, and a FIFO or /dev/zero
// never ends. A file that does not exist is NotFound.
Result<std::string> ReadSmallRegularFile(const std::string& file, std::size_t max_bytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const std::string what = "cannot read " + file + ": " + std::strerror(errno);
    return errno == ENOENT ? Status::NotFound(what) : Status::IOError(what);
  }
  const auto close_fd = [fd](Result<std::string> result) {
    ::close(fd);
    return result;
  };
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return close_fd(Status::IOError("cannot read " + file + ": " + std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return close_fd(Status::InvalidArgument(file + " is not a regular file"));
  }
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) {
    return close_fd(
        Status::InvalidArgument(file + " is larger than " + std::to_string(max_bytes) + " bytes"));
  }
  std::string content(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::read(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return close_fd(Status::IOError("cannot read " + file + ": " + std::strerror(errno)));
    }
    if (n == 0) break;  // the file shrank while it was read
    done += static_cast<std::size_t>(n);
  }
  content.resize(done);
  return close_fd(std::move(content));
}

// The value of a kafka.<property>_file key: the file's content, one trailing newline dropped.
Result<std::string> ReadValueFile(const std::string& file, const std::string& path) {
  auto content = ReadSmallRegularFile(file, kMaxKafkaValueFileBytes);
  if (!content.ok()) return KeyError(path, content.status().message());
  if (content->ends_with('\n')) content->pop_back();
  return content;
}

// A kafka entry's property and value: `<property>: value` with ${NAME} expanded, or
// `<property>_file: path` read from the file.
Result<std::pair<std::string, std::string>> KafkaProperty(const std::string& key,
                                                          const YAML::Node& node,
                                                          const std::string& path) {
  auto text = ScalarAt(node, path);
  if (!text.ok()) return text.status();
  constexpr std::string_view kFileSuffix = "_file";
  if (key.size() > kFileSuffix.size() && key.ends_with(kFileSuffix)) {
    auto content = ReadValueFile(*text, path);
    if (!content.ok()) return content.status();
    return std::pair{key.substr(0, key.size() - kFileSuffix.size()), std::move(content).value()};
  }
  auto value = ExpandEnvironment(*text, path);
  if (!value.ok()) return value.status();
  return std::pair{key, std::move(value).value()};
}

Status ParseKafka(const YAML::Node& node, const std::string& path, BridgeConfig* config) {
  if (!node.IsMap()) return KeyError(path, "must be a map of librdkafka properties");
  std::unique_ptr<RdKafka::Conf> probe(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  for (const auto& entry : node) {
    const std::string key_path = path + "." + entry.first.as<std::string>();
    auto property = KafkaProperty(entry.first.as<std::string>(), entry.second, key_path);
    if (!property.ok()) return property.status();
    const auto& [key, value] = *property;
    if (config->kafka.count(key) || (key == "bootstrap.servers" && config->embedded)) {
      return KeyError(key_path, "sets " + path + "." + key + " a second time");
    }
    if (BridgeOwnedKafkaKeys().count(key)) {
      return KeyError(
          key_path,
          "is set by the bridge itself and cannot be overridden" +
              std::string(key == "group.id"            ? " (use group_id)"
                          : key == "group.instance.id" ? " (use group_instance_id)"
                          : key == "transactional.id"  ? " (set delivery.guarantee: exactly_once)"
                                                       : ""));
    }
    if (key == "bootstrap.servers" && value == kEmbeddedBootstrap) {
      config->embedded = true;
      continue;
    }
    std::string errstr;
    if (probe->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return KeyError(key_path, errstr);
    }
    config->kafka[key] = value;
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
    if (auto problem = TopicNameProblem(from)) return KeyError(path + "." + from, *problem);
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

// ---- The key table ----
// One entry per key of the configuration file: the parser reads the file through it,
// DescribeConfig prints the start-up summary from it, and a test checks docs/configuration.md
// against it, so a key is added in one place. A dotted path's first part is a section (a map).

using KeyReader = Status (*)(const YAML::Node& node, const std::string& path, BridgeConfig* c);
// The value shown in the start-up summary; nullopt leaves the key out.
using KeyShower = std::optional<std::string> (*)(const BridgeConfig& c);

struct ConfigKey {
  std::string_view path;
  bool required;
  KeyReader read;
  KeyShower show;
};

template <auto kMember, int64_t kMax>
Status ReadPositive(const YAML::Node& node, const std::string& path, BridgeConfig* c) {
  auto v = PositiveAt(node, path, kMax);
  if (v.ok()) c->*kMember = static_cast<std::remove_reference_t<decltype(c->*kMember)>>(*v);
  return v.status();
}

template <auto kMember>
Status ReadDuration(const YAML::Node& node, const std::string& path, BridgeConfig* c) {
  auto ms = DurationAt(node, path);
  if (!ms.ok()) return ms.status();
  if (*ms <= 0) return KeyError(path, "must be greater than zero");
  c->*kMember = *ms;
  return Status::Ok();
}

template <auto kMember>
Status ReadBool(const YAML::Node& node, const std::string& path, BridgeConfig* c) {
  auto v = BoolAt(node, path);
  if (v.ok()) c->*kMember = *v;
  return v.status();
}

template <auto kMember>
Status ReadTopic(const YAML::Node& node, const std::string& path, BridgeConfig* c) {
  auto t = TopicAt(node, path);
  if (t.ok()) c->*kMember = *t;
  return t.status();
}

template <auto kMember>
std::optional<std::string> ShowNumber(const BridgeConfig& c) {
  return std::to_string(c.*kMember);
}

template <auto kMember>
std::optional<std::string> ShowMs(const BridgeConfig& c) {
  return std::to_string(c.*kMember) + "ms";
}

template <auto kMember>
std::optional<std::string> ShowText(const BridgeConfig& c) {
  return c.*kMember;
}

template <auto kMember>
std::optional<std::string> ShowBool(const BridgeConfig& c) {
  return std::string(c.*kMember ? "true" : "false");
}

// Shown only with exactly_once, which is the only mode that reads them.
template <KeyShower kShow>
std::optional<std::string> ShowIfExactlyOnce(const BridgeConfig& c) {
  return c.exactly_once() ? kShow(c) : std::nullopt;
}

std::string Joined(const auto& items, const auto& format) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += format(item);
  }
  return out;
}

// Built by appending, like Quote.
std::string Enclosed(char open, const std::string& inner, char close) {
  std::string out(1, open);
  out += inner;
  out += close;
  return out;
}

std::optional<std::string> ShowKafka(const BridgeConfig& c) {
  // "key: value" (not key=value) so that the embedded banner stays the only line of output
  // containing "bootstrap.servers=".
  std::vector<std::string> entries;
  if (c.embedded) entries.push_back("bootstrap.servers: embedded");
  for (const auto& [key, value] : c.kafka) {
    entries.push_back(key + ": " + (IsSecretKafkaKey(key) ? "***" : value));
  }
  return Enclosed('{', Joined(entries, [](const std::string& e) { return e; }), '}');
}

const std::vector<ConfigKey>& ConfigKeyTable() {
  static const std::vector<ConfigKey> keys = {
      {"kafka", true, [](auto& n, auto& p, auto* c) { return ParseKafka(n, p, c); }, ShowKafka},
      {"routes", true, [](auto& n, auto& p, auto* c) { return ParseRoutes(n, p, c); },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return Enclosed(
             '{', Joined(c.routes, [](const auto& r) { return r.first + "->" + r.second; }), '}');
       }},
      {"allowed_targets", false,
       [](auto& n, auto& p, auto* c) { return ParseAllowedTargets(n, p, c); },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return Enclosed('[', Joined(c.allowed_targets, [](const std::string& t) { return t; }),
                         ']');
       }},
      {"dead_letter_topic", true, ReadTopic<&BridgeConfig::dead_letter_topic>,
       ShowText<&BridgeConfig::dead_letter_topic>},
      {"group_id", false,
       [](auto& n, auto& p, auto* c) {
         auto t = ScalarAt(n, p);
         if (!t.ok() || t->empty()) return KeyError(p, "must be a non-empty consumer group id");
         c->group_id = *t;
         return Status::Ok();
       },
       ShowText<&BridgeConfig::group_id>},
      {"group_instance_id", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (text.ok()) c->group_instance_id = *text;
         return text.status();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         if (!c.group_instance_id) return "(derived)";
         return c.group_instance_id->empty() ? "(none)" : *c.group_instance_id;
       }},
      {"retention_margin", false,
       [](auto& n, auto& p, auto* c) {
         auto ms = DurationAt(n, p);  // zero is allowed: max_delay alone
         if (ms.ok()) c->retention_margin_ms = *ms;
         return ms.status();
       },
       ShowMs<&BridgeConfig::retention_margin_ms>},
      {"allow_unsafe_retention", false, ReadBool<&BridgeConfig::allow_unsafe_retention>,
       ShowBool<&BridgeConfig::allow_unsafe_retention>},
      {"storage.dir", true,
       [](auto& n, auto& p, auto* c) {
         auto dir = ScalarAt(n, p);
         if (!dir.ok()) return dir.status();
         if (dir->empty()) return KeyError(p, "must be a directory path");
         c->storage_dir = *dir;
         return Status::Ok();
       },
       ShowText<&BridgeConfig::storage_dir>},
      {"storage.sync_interval_ms", false, ReadPositive<&BridgeConfig::sync_interval_ms, 60'000>,
       ShowNumber<&BridgeConfig::sync_interval_ms>},
      {"storage.checkpoint_interval_ms", false,
       ReadPositive<&BridgeConfig::checkpoint_interval_ms, 60'000>,
       ShowNumber<&BridgeConfig::checkpoint_interval_ms>},
      {"storage.max_open_hours", false, ReadPositive<&BridgeConfig::max_open_hours, 100'000>,
       ShowNumber<&BridgeConfig::max_open_hours>},
      {"wheel.tick_ms", false, ReadPositive<&BridgeConfig::tick_ms, 1000>,
       ShowNumber<&BridgeConfig::tick_ms>},
      {"wheel.preload_seconds", false, ReadPositive<&BridgeConfig::preload_seconds, 3600>,
       ShowNumber<&BridgeConfig::preload_seconds>},
      {"wheel.max_preloaded_records", false,
       ReadPositive<&BridgeConfig::max_preloaded_records, 100'000'000>,
       ShowNumber<&BridgeConfig::max_preloaded_records>},
      {"max_delay", false, ReadDuration<&BridgeConfig::max_delay_ms>,
       ShowMs<&BridgeConfig::max_delay_ms>},
      {"max_record_bytes", false, ReadPositive<&BridgeConfig::max_record_bytes, 16 * 1024 * 1024>,
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return std::to_string(c.max_record_bytes) +
                " (producer message.max.bytes=" + std::to_string(c.producer_message_max_bytes) +
                ")";
       }},
      {"delivery.guarantee", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         if (*text == "at_least_once") {
           c->guarantee = DeliveryGuarantee::kAtLeastOnce;
         } else if (*text == "exactly_once") {
           c->guarantee = DeliveryGuarantee::kExactlyOnce;
         } else {
           return KeyError(p, "must be at_least_once or exactly_once, got " + Quote(*text));
         }
         return Status::Ok();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return std::string(c.exactly_once() ? "exactly_once" : "at_least_once");
       }},
      {"delivery.transaction_interval_ms", false,
       ReadPositive<&BridgeConfig::transaction_interval_ms, 60'000>,
       ShowIfExactlyOnce<ShowNumber<&BridgeConfig::transaction_interval_ms>>},
      {"delivery.transaction_max_records", false,
       ReadPositive<&BridgeConfig::transaction_max_records, 10'000'000>,
       ShowIfExactlyOnce<ShowNumber<&BridgeConfig::transaction_max_records>>},
      {"delivery.transaction_timeout_ms", false,
       ReadPositive<&BridgeConfig::transaction_timeout_ms, 900'000>,
       ShowIfExactlyOnce<ShowNumber<&BridgeConfig::transaction_timeout_ms>>},
      {"embedded.partitions", false, ReadPositive<&BridgeConfig::embedded_partitions, 1000>,
       [](const BridgeConfig& c) -> std::optional<std::string> {
         if (!c.embedded) return std::nullopt;
         return std::to_string(c.embedded_partitions);
       }},
      {"log_level", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         auto level = ParseLogLevel(*text);
         if (!level.ok()) return level.status().WithContext(p);
         c->log_level = *level;
         return Status::Ok();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return std::string(LogLevelName(c.log_level));
       }},
      {"log_format", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         auto format = ParseLogFormat(*text);
         if (!format.ok()) return format.status().WithContext(p);
         c->log_format = *format;
         return Status::Ok();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return std::string(c.log_format == LogFormat::kJson ? "json" : "text");
       }},
      {"stats_interval_s", false, ReadPositive<&BridgeConfig::stats_interval_s, 86'400>,
       ShowNumber<&BridgeConfig::stats_interval_s>},
      {"kafka_stats_file", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         if (text->empty()) return KeyError(p, "must be a file path");
         c->kafka_stats_file = *text;
         return Status::Ok();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         if (c.kafka_stats_file.empty()) return std::nullopt;
         return c.kafka_stats_file;
       }},
      {"metrics.listen", false,
       [](auto& n, auto& p, auto* c) {
         auto text = ScalarAt(n, p);
         if (!text.ok()) return text.status();
         if (text->empty()) {
           c->metrics_listen.reset();
           return Status::Ok();
         }
         auto address = ParseListenAddress(*text);
         if (!address.ok()) return KeyError(p, address.status().message());
         c->metrics_listen = *address;
         return Status::Ok();
       },
       [](const BridgeConfig& c) -> std::optional<std::string> {
         return c.metrics_listen ? c.metrics_listen->ToString() : std::string("(off)");
       }},
  };
  return keys;
}

const ConfigKey* FindKey(std::string_view path) {
  for (const ConfigKey& key : ConfigKeyTable()) {
    if (key.path == path) return &key;
  }
  return nullptr;
}

bool IsSection(std::string_view path) {
  for (const ConfigKey& key : ConfigKeyTable()) {
    if (key.path.size() > path.size() && key.path.starts_with(path) &&
        key.path[path.size()] == '.') {
      return true;
    }
  }
  return false;
}

// Reads a map of keys (the top level, or a section) through the table; seen collects the paths
// of the keys and sections it met.
Status ReadKeys(const YAML::Node& node, const std::string& path, BridgeConfig* config,
                std::set<std::string>* seen) {
  if (!node.IsMap()) return KeyError(path.empty() ? "(top level)" : path, "must be a map");
  for (const auto& entry : node) {
    const std::string key_path = (path.empty() ? "" : path + ".") + entry.first.as<std::string>();
    seen->insert(key_path);
    Status s = Status::Ok();
    if (const ConfigKey* key = FindKey(key_path)) {
      s = key->read(entry.second, key_path, config);
    } else if (IsSection(key_path)) {
      s = ReadKeys(entry.second, key_path, config, seen);
    } else {
      s = KeyError(key_path, "unknown key");
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// A required key that is missing is named by its outermost missing part ("storage: required"
// when there is no storage section at all).
Status CheckRequired(const std::set<std::string>& seen) {
  for (const ConfigKey& key : ConfigKeyTable()) {
    if (!key.required || seen.count(std::string(key.path))) continue;
    size_t end = key.path.find('.');
    while (end != std::string_view::npos && seen.count(std::string(key.path.substr(0, end)))) {
      end = key.path.find('.', end + 1);
    }
    return KeyError(std::string(key.path.substr(0, end)), "required");
  }
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
    std::set<std::string> seen;
    if (Status s = ReadKeys(root, "", &config, &seen); !s.ok()) return s;
    if (Status s = CheckRequired(seen); !s.ok()) return s;
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
  auto text = ReadSmallRegularFile(path, kMaxConfigFileBytes);
  if (!text.ok()) return text.status().WithContext("config file " + path);
  auto config = ParseConfig(*text);
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
  std::string out;
  for (const ConfigKey& key : ConfigKeyTable()) {
    const std::optional<std::string> value = key.show(c);
    if (!value) continue;
    if (!out.empty()) out += ' ';
    out.append(key.path).append("=").append(*value);
  }
  return out;
}

std::vector<std::string> ConfigKeyPaths() {
  std::vector<std::string> paths;
  for (const ConfigKey& key : ConfigKeyTable()) paths.emplace_back(key.path);
  return paths;
}

}  // namespace delaybridge::plugin
