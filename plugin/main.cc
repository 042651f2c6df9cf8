// delaybridge: the DelayBridge sidecar. Consumes delay topics, stores each record in a
// per-partition DelayLog and produces it to its target topic when it is due.
// Usage and exit codes: see kUsage below and docs/bridge.md.
#include <librdkafka/rdkafka.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <variant>

#include "core/clock.h"
#include "plugin/bridge.h"
#include "plugin/broker_check.h"
#include "plugin/config.h"
#include "plugin/embedded_cluster.h"
#include "plugin/log.h"
#include "plugin/retention_check.h"
#include "storage/directory_lock.h"

#ifdef DELAYBRIDGE_JEMALLOC
// jemalloc reads its options from this symbol at start (MALLOC_CONF in the environment still
// overrides them). Freed pages go back to the system after a second instead of ten, and two
// arenas serve the bridge's threads instead of four per core: with jemalloc's defaults the
// bridge peaked at 288 MB resident in the full-speed benchmark, with these at 250 MB, as with
// glibc's malloc (docs/BENCHMARKS.md, "The allocator").
extern "C" {
const char* malloc_conf = "narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
#endif

namespace {

using namespace delaybridge;
using namespace delaybridge::plugin;

constexpr int kExitOk = 0;
constexpr int kExitRuntimeFailure = 1;
constexpr int kExitUsageOrConfig = 2;
constexpr int kExitBrokerUnreachable = 3;
constexpr int kCheckTimeoutMs = 10'000;

constexpr const char* kUsage =
    "usage: delaybridge --config FILE [--check]\n"
    "       delaybridge --help | --version\n"
    "\n"
    "  --config FILE  run the bridge with this configuration (docs/configuration.md)\n"
    "  --check        validate the configuration and reach the brokers, then exit\n"
    "  --help         show this help\n"
    "  --version      print the version\n"
    "\n"
    "exit codes: 0 ok (clean shutdown on SIGTERM/SIGINT, or --check passed),\n"
    "            1 runtime failure, 2 usage or configuration error,\n"
    "            3 --check could not reach the brokers\n";

struct Options {
  std::string config_path;
  bool check = false;
};

// Returns the options, or an exit code when the command line was fully handled.
std::variant<Options, int> ParseArgs(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return kExitOk;
    }
    if (arg == "--version") {
      std::cout << "delaybridge " << DELAYBRIDGE_VERSION << "\n";
      return kExitOk;
    }
    if (arg == "--check") {
      options.check = true;
    } else if (arg == "--config" && i + 1 < argc) {
      options.config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      options.config_path = arg.substr(9);
    } else {
      std::cerr << "delaybridge: unknown or incomplete argument \"" << arg << "\"\n" << kUsage;
      return kExitUsageOrConfig;
    }
  }
  if (options.config_path.empty()) {
    std::cerr << "delaybridge: --config FILE is required\n" << kUsage;
    return kExitUsageOrConfig;
  }
  return options;
}

// Every open hour of every store holds two descriptors: raise the soft limit to the hard one
// (what systemd's LimitNOFILE= or `ulimit -Hn` allows) and say what it is.
void RaiseFileLimit(const BridgeConfig& config, Logger& logger) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  const uint64_t per_store = 2 * config.max_open_hours + 16;
  const std::string text =
      "open files limit " + std::to_string(limit.rlim_cur) + ": room for " +
      std::to_string(limit.rlim_cur / per_store) +
      " stores (partitions) with storage.max_open_hours=" + std::to_string(config.max_open_hours) +
      " hours open each";
  if (limit.rlim_cur / per_store < 16) {
    logger.Warn(text + "; raise the limit (ulimit -n, LimitNOFILE=) or lower max_open_hours");
  } else {
    logger.Info(text);
  }
}

Status PrepareStorageDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec) && !ec) {
    // New: the bridge's user only (the stores hold record contents). An existing directory
    // keeps the mode its operator gave it.
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) return Status::IOError("storage.dir: cannot create " + dir + ": " + ec.message());
  if (::access(dir.c_str(), W_OK) != 0) {
    return Status::IOError("storage.dir: " + dir + " is not writable");
  }
  return Status::Ok();
}

// Kafka holds the truth, so a delay topic must keep a record until it is delivered: refuses to
// start (exit 2) when Kafka could delete one earlier, unless allow_unsafe_retention. A broker
// that cannot answer now is not a reason to refuse: the bridge waits for brokers anyway.
bool RetentionIsSafe(const BridgeConfig& config, const std::string& bootstrap, Logger& logger) {
  if (config.embedded) return true;  // an in-memory broker that deletes nothing
  std::map<std::string, std::string> kafka = config.kafka;
  kafka["bootstrap.servers"] = bootstrap;
  std::set<std::string> topics;
  for (const auto& [from, to] : config.routes) topics.insert(from);
  auto retention = DescribeRetention(kafka, topics, kCheckTimeoutMs);
  if (!retention.ok()) {
    logger.Warn("cannot check the delay topics' retention: " + retention.status().ToString() +
                " (records Kafka deletes before they are due cannot be rebuilt after a failover)");
    return true;
  }
  const std::vector<std::string> problems =
      RetentionProblems(*retention, config.max_delay_ms, config.retention_margin_ms);
  for (const auto& problem : problems) {
    if (config.allow_unsafe_retention) {
      logger.Warn(problem + " (allowed by allow_unsafe_retention)");
    } else {
      logger.Error(problem);
    }
  }
  if (!problems.empty() && !config.allow_unsafe_retention) {
    logger.Error(
        "refusing to start: fix the topic settings above, or set "
        "allow_unsafe_retention: true to accept that Kafka may delete pending records");
    return false;
  }
  return true;
}

int Check(const BridgeConfig& config, const std::string& bootstrap, Logger& logger) {
  std::map<std::string, std::string> kafka = config.kafka;
  kafka["bootstrap.servers"] = bootstrap;
  std::set<std::string> topics = config.OutputTopics();
  for (const auto& [from, to] : config.routes) topics.insert(from);
  auto result = CheckBroker(kafka, topics, kCheckTimeoutMs);
  if (!result.ok()) {
    logger.Error("check failed: " + result.status().ToString());
    return kExitBrokerUnreachable;
  }
  for (const auto& topic : result->missing_topics) {
    logger.Warn("check: topic " + topic +
                " does not exist (yet); the bridge needs it unless the brokers auto-create it");
  }
  if (!RetentionIsSafe(config, bootstrap, logger)) return kExitUsageOrConfig;
  logger.Info("check passed: configuration valid, " + std::to_string(result->brokers) +
              " broker(s) reachable at " + bootstrap);
  return kExitOk;
}

int Main(int argc, char** argv) {
  auto parsed = ParseArgs(argc, argv);
  if (auto* code = std::get_if<int>(&parsed)) return *code;
  const Options& options = std::get<Options>(parsed);

  auto config = LoadConfigFile(options.config_path);
  if (!config.ok()) {
    std::cerr << "delaybridge: configuration error: " << config.status().message() << "\n";
    return kExitUsageOrConfig;
  }
  Logger logger(config->log_level, STDERR_FILENO, config->log_format);
  // Rebalance behaviour depends on the librdkafka build (docs/bridge.md, "Duplicates after a
  // failover"): the first line names it.
  logger.Info(std::string("delaybridge ") + DELAYBRIDGE_VERSION + " (librdkafka " +
              rd_kafka_version_str() + ") starting with " + options.config_path + ": " +
              DescribeConfig(*config));
  RaiseFileLimit(*config, logger);
  if (Status s = PrepareStorageDir(config->storage_dir); !s.ok()) {
    logger.Error(s.ToString());
    return kExitUsageOrConfig;
  }

  std::unique_ptr<EmbeddedCluster> embedded;
  std::string bootstrap;
  if (config->embedded) {
    std::set<std::string> topics = config->OutputTopics();
    for (const auto& [from, to] : config->routes) topics.insert(from);
    auto cluster = EmbeddedCluster::Start(topics, config->embedded_partitions);
    if (!cluster.ok()) {
      logger.Error(cluster.status().ToString());
      return kExitRuntimeFailure;
    }
    embedded = std::move(cluster).value();
    bootstrap = embedded->bootstrap_servers();
    const auto& [delay_topic, target_topic] = *config->routes.begin();
    std::cout << EmbeddedBanner(bootstrap, delay_topic, target_topic) << std::flush;
  } else {
    bootstrap = config->kafka.at("bootstrap.servers");
  }

  if (options.check) return Check(*config, bootstrap, logger);
  // Held until the process exits (--check, which only reads, does not take it).
  auto lock = storage::DirectoryLock::Acquire(config->storage_dir);
  if (!lock.ok()) {
    logger.Error("storage.dir: " + lock.status().message());
    return kExitUsageOrConfig;
  }
  if (!RetentionIsSafe(*config, bootstrap, logger)) return kExitUsageOrConfig;

  SystemClock clock;
  Bridge bridge(*config, bootstrap, logger, clock);
  return bridge.Run();
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
