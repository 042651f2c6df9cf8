// BridgeConfig: the bridge's configuration as loaded from config.yaml, validated in full
// before anything starts. Every error names the key's path, e.g.
//   wheel.tick_ms: must be a positive integer, got "abc"
// The keys, their defaults and their meaning are documented in docs/configuration.md.
//
// Thread-safety: plain values; parse once, then share read-only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "plugin/listen_address.h"
#include "plugin/log.h"

namespace delaybridge::plugin {

// Kafka's default max.message.bytes, a broker's and a topic's (1 MiB + 12 bytes of log overhead).
inline constexpr int64_t kKafkaMaxMessageBytes = 1'048'588;
// What a delivery adds to the stored record on the wire: the x-delay-source header and the
// record batch's framing (topic names are at most 249 bytes).
inline constexpr uint32_t kDeliveryFramingBytes = 1024;

// The value of kafka."bootstrap.servers" that starts an in-process broker.
inline constexpr const char* kEmbeddedBootstrap = "embedded";

// delivery.guarantee (docs/bridge.md, "Guarantees").
enum class DeliveryGuarantee {
  kAtLeastOnce,  // a crash can deliver a record again
  kExactlyOnce,  // deliveries and progress commit together in Kafka transactions
};

struct BridgeConfig {
  // Passed verbatim to the librdkafka consumer and producer (bootstrap.servers included,
  // unless it is "embedded").
  std::map<std::string, std::string> kafka;
  bool embedded = false;  // kafka."bootstrap.servers" == "embedded"

  std::map<std::string, std::string> routes;  // delay topic -> default target topic
  std::set<std::string> allowed_targets;      // topics x-target-topic may name
  std::string dead_letter_topic;
  std::string group_id = "delaybridge";
  // Static group membership (KIP-345), so a restarted instance gets its partitions back at
  // once. nullopt: derived from the host name and storage.dir (DefaultGroupInstanceId); an
  // empty string turns static membership off.
  std::optional<std::string> group_instance_id;

  std::string storage_dir;
  // Local group commit period: Sync() then the source-offset marker. Kafka holds the durable
  // copy, so this only bounds what a restart reads again (docs/bridge.md).
  int64_t sync_interval_ms = 100;
  // Per store: hour files held open for appending (two descriptors and ~190 KB each while open).
  // Enough for a 30-day spread of delays: fewer than the hours receiving appends makes nearly
  // every append reopen an hour (docs/BENCHMARKS.md).
  size_t max_open_hours = 1024;

  int64_t tick_ms = 1;
  int64_t preload_seconds = 5;
  size_t max_preloaded_records = 250'000;  // soft bound on records held in memory
  int64_t checkpoint_interval_ms = 100;    // how often moved checkpoints are persisted

  int64_t max_delay_ms = 3650LL * 24 * 3600 * 1000;
  // A delay topic must keep records for max_delay + retention_margin (plugin/retention_check.h)
  // unless allow_unsafe_retention says the operator accepts losing records Kafka deletes early.
  int64_t retention_margin_ms = 24LL * 3600 * 1000;
  bool allow_unsafe_retention = false;
  // Largest record accepted, as stored (key + value + headers + metadata); with the delivery's
  // framing it must fit in producer_message_max_bytes (checked when parsing).
  uint32_t max_record_bytes = 1024 * 1024 - kDeliveryFramingBytes;
  // The producer's message.max.bytes: kafka.message.max.bytes when set, else Kafka's default
  // max.message.bytes, so the producer refuses nothing a default broker takes.
  int64_t producer_message_max_bytes = kKafkaMaxMessageBytes;

  DeliveryGuarantee guarantee = DeliveryGuarantee::kAtLeastOnce;
  // exactly_once: a transaction is committed this often (it holds the deliveries made since the
  // last one), and the broker aborts one left open longer than transaction_timeout_ms (the
  // longest a new owner waits for a vanished instance's open transaction).
  int64_t transaction_interval_ms = 100;
  int64_t transaction_timeout_ms = 10'000;
  // exactly_once: a transaction holding this many records is committed without waiting for the
  // interval (a soft bound: records keep going in until the cut).
  size_t transaction_max_records = 50'000;
  bool exactly_once() const { return guarantee == DeliveryGuarantee::kExactlyOnce; }

  int embedded_partitions = 4;  // partitions of each topic the embedded broker creates
  LogLevel log_level = LogLevel::kInfo;
  LogFormat log_format = LogFormat::kText;
  int64_t stats_interval_s = 30;
  // Where librdkafka's statistics go (kafka."statistics.interval.ms" sets their period); the
  // config requires both or neither.
  std::string kafka_stats_file;
  // metrics.listen: where /metrics, /healthz and /readyz are served; nullopt: not served.
  std::optional<ListenAddress> metrics_listen = ListenAddress{"127.0.0.1", 9464};

  // Every topic the bridge writes to: route targets, allowed targets, dead-letter topic.
  std::set<std::string> OutputTopics() const;
};

// "delaybridge-<host name>-<hash of the absolute storage.dir>": the same after a restart on the
// same machine, different for another machine or another store directory on the same one.
std::string DefaultGroupInstanceId(const std::string& storage_dir);

// The largest file a kafka.<property>_file key reads: a secret, a key or a certificate chain.
inline constexpr std::size_t kMaxKafkaValueFileBytes = 1 << 20;
// The largest configuration file LoadConfigFile reads.
inline constexpr std::size_t kMaxConfigFileBytes = 16 << 20;

// Parses and validates YAML text; errors carry the key path.
Result<BridgeConfig> ParseConfig(const std::string& yaml_text);

// Reads and parses a file; errors are prefixed with the file name.
Result<BridgeConfig> LoadConfigFile(const std::string& path);

// True for a librdkafka property whose value must never be logged: every ssl.* and sasl.* key
// except the few that name a mechanism, a user or a file, and any key naming a password,
// secret, token or credential.
bool IsSecretKafkaKey(std::string_view key);

// The settings on one line, `key=value` for each key of the file that applies, for the start-up
// log. Values of secret kafka keys (IsSecretKafkaKey) are masked.
std::string DescribeConfig(const BridgeConfig& config);

// Every key of the configuration file, dotted ("storage.dir"), in the order of the key table
// the parser and DescribeConfig read (config.cc). "kafka" and "routes" are maps of free keys.
std::vector<std::string> ConfigKeyPaths();

}  // namespace delaybridge::plugin
