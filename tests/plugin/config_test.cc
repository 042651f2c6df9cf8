// Configuration parsing: the shipped config.yaml loads, every key is read, and every bad value
// is rejected with the key's path in the message; the documented keys are the keys read.
#include "plugin/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

const char* kMinimal = R"(
kafka:
  bootstrap.servers: "127.0.0.1:9092"
routes:
  delayed: delivered
allowed_targets: [delivered, other]
dead_letter_topic: delayed.dlq
storage:
  dir: /tmp/x
)";

// The minimal config with `line` appended (a top-level key, or a section with its keys).
std::string With(const std::string& extra) { return std::string(kMinimal) + extra + "\n"; }

std::string ErrorOf(const std::string& yaml) {
  auto config = ParseConfig(yaml);
  EXPECT_FALSE(config.ok()) << "accepted:\n" << yaml;
  return config.ok() ? "" : config.status().message();
}

TEST(ConfigTest, ShippedConfigLoadsWithDefaults) {
  auto config = LoadConfigFile(std::string(DELAYBRIDGE_SOURCE_DIR) + "/config.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->embedded);
  EXPECT_TRUE(config->kafka.empty());
  EXPECT_EQ(config->routes.at("delayed"), "delivered");
  EXPECT_EQ(config->allowed_targets, std::set<std::string>{"delivered"});
  EXPECT_EQ(config->dead_letter_topic, "delayed.dlq");
  EXPECT_EQ(config->storage_dir, "./data");
  EXPECT_EQ(config->tick_ms, 1);
  EXPECT_EQ(config->preload_seconds, 5);
  EXPECT_EQ(config->max_delay_ms, 3650LL * 86'400'000);
  EXPECT_EQ(config->group_id, "delaybridge");
  EXPECT_EQ(config->sync_interval_ms, 100);
}

// The systemd unit's example: valid, and storing where the unit lets the service write.
TEST(ConfigTest, TheServiceExampleConfigLoadsAndStoresInTheStateDirectory) {
  auto config = LoadConfigFile(std::string(DELAYBRIDGE_SOURCE_DIR) + "/packaging/config.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_FALSE(config->embedded);
  EXPECT_EQ(config->storage_dir, "/var/lib/delaybridge");
}

TEST(ConfigTest, ReadsEveryOptionalKey) {
  auto good = ParseConfig(R"(
kafka: {bootstrap.servers: "b:1", session.timeout.ms: 6000, client.id: me,
        statistics.interval.ms: 1000}
routes: {a: b}
dead_letter_topic: dlq
group_id: g1
storage: {dir: d, sync_interval_ms: 7, checkpoint_interval_ms: 50, max_open_hours: 3}
wheel: {tick_ms: 2, preload_seconds: 7, max_preloaded_records: 1000}
max_delay: 15m
max_record_bytes: 2048
embedded: {partitions: 8}
log_level: debug
stats_interval_s: 9
kafka_stats_file: /var/log/delaybridge/kafka-stats.jsonl
)");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_FALSE(good->embedded);
  EXPECT_EQ(good->kafka.at("bootstrap.servers"), "b:1");
  EXPECT_EQ(good->kafka.at("session.timeout.ms"), "6000");
  EXPECT_EQ(good->group_id, "g1");
  EXPECT_EQ(good->sync_interval_ms, 7);
  EXPECT_EQ(good->checkpoint_interval_ms, 50);
  EXPECT_EQ(good->max_open_hours, 3u);
  EXPECT_EQ(good->tick_ms, 2);
  EXPECT_EQ(good->preload_seconds, 7);
  EXPECT_EQ(good->max_preloaded_records, 1000u);
  EXPECT_EQ(good->max_delay_ms, 15 * 60'000);
  EXPECT_EQ(good->max_record_bytes, 2048u);
  EXPECT_EQ(good->embedded_partitions, 8);
  EXPECT_EQ(good->log_level, LogLevel::kDebug);
  EXPECT_EQ(good->stats_interval_s, 9);
  EXPECT_EQ(good->kafka_stats_file, "/var/log/delaybridge/kafka-stats.jsonl");
  EXPECT_EQ(good->kafka.at("statistics.interval.ms"), "1000");
  EXPECT_TRUE(good->allowed_targets.empty());
  EXPECT_EQ(good->OutputTopics(), (std::set<std::string>{"b", "dlq"}));
}

// Kafka's rule for topic names, not more: the longest name it allows and every character class
// load, while a consumer group id may hold anything.
TEST(ConfigTest, TopicNamesFollowKafkasRule) {
  const std::string longest(249, 't');
  auto config = ParseConfig("kafka: {bootstrap.servers: b}\nroutes: {Delay_1.in-x: " + longest +
                            "}\ndead_letter_topic: dlq\ngroup_id: \"team a/bridge:1\"\n"
                            "storage: {dir: d}\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->routes.at("Delay_1.in-x"), longest);
  EXPECT_EQ(config->group_id, "team a/bridge:1");
}

TEST(ConfigTest, ErrorsNameTheKeyPath) {
  struct Case {
    std::string yaml;
    std::string expected;
  };
  const std::string tail = "storage:\n  dir: d\n";
  const Case cases[] = {
      {With("wheel:\n  tick_ms: abc"), "wheel.tick_ms: must be a positive integer, got \"abc\""},
      {With("wheel:\n  tick_ms: 0"), "wheel.tick_ms: must be a positive integer, got \"0\""},
      {With("wheel:\n  tick_ms: 5000"), "wheel.tick_ms: must be at most 1000, got \"5000\""},
      {With("wheel:\n  preload_seconds: -1"), "wheel.preload_seconds: must be a positive integer"},
      {With("wheel:\n  speed: 3"), "wheel.speed: unknown key"},
      {With("wheel: 3"), "wheel: must be a map"},
      {With("colour: blue"), "colour: unknown key"},
      {With("max_delay: 10"),
       "max_delay: must be a duration like 500ms, 30s, 15m, 2h or 3650d, got \"10\""},
      {With("max_delay: 0s"), "max_delay: must be greater than zero"},
      {With("max_record_bytes: big"), "max_record_bytes: must be a positive integer, got \"big\""},
      {With("max_record_bytes: 999999999"), "max_record_bytes: must be at most 16777216"},
      {With("log_level: loud"), "log_level: must be one of debug, info, warn, error, got \"loud\""},
      {With("log_format: xml"), "log_format: must be text or json, got \"xml\""},
      {With("stats_interval_s: [1]"),
       "stats_interval_s: must be a single value, not a list or a map"},
      {With("embedded:\n  partitions: 0"), "embedded.partitions: must be a positive integer"},
      {With("kafka_stats_file: stats.jsonl"),
       "kafka_stats_file: needs kafka.statistics.interval.ms"},
      {With("kafka_stats_file: \"\""), "kafka_stats_file: must be a file path"},
      {"kafka: {bootstrap.servers: b, statistics.interval.ms: 500}\nroutes: {a: "
       "b}\ndead_letter_topic: dlq\n" +
           tail,
       "kafka.statistics.interval.ms: needs kafka_stats_file"},
      {With("group_id: \"\""), "group_id: must be a non-empty consumer group id"},
      {With("allow_unsafe_retention: maybe"),
       "allow_unsafe_retention: must be true or false, got \"maybe\""},
      {With("retention_margin: 1w"), "retention_margin: must be a duration"},
      {std::string(kMinimal) + "  sync_interval_ms: x\n",
       "storage.sync_interval_ms: must be a positive integer, got \"x\""},
      {std::string(kMinimal) + "  checkpoint_interval_ms: 0\n",
       "storage.checkpoint_interval_ms: must be a positive integer"},
      {std::string(kMinimal) + "  max_open_hours: y\n",
       "storage.max_open_hours: must be a positive integer"},
      {std::string(kMinimal) + "  flavour: z\n", "storage.flavour: unknown key"},
      {"kafka:\n  bootstrap.servers: b\nroutes: {a: b}\ndead_letter_topic: dlq\n",
       "storage: required"},
      {"kafka:\n  bootstrap.servers: b\nroutes: {a: b}\n" + tail, "dead_letter_topic: required"},
      {"kafka:\n  bootstrap.servers: b\ndead_letter_topic: dlq\n" + tail, "routes: required"},
      {"routes: {a: b}\ndead_letter_topic: dlq\n" + tail, "kafka: required"},
      {"kafka: {client.id: x}\nroutes: {a: b}\ndead_letter_topic: dlq\n" + tail,
       "kafka.bootstrap.servers: required"},
      {"kafka: {bootstrap.servers: b, no.such.property: 1}\nroutes: {a: b}\ndead_letter_topic: "
       "dlq\n" +
           tail,
       "kafka.no.such.property: No such configuration property"},
      {"kafka: {bootstrap.servers: b, session.timeout.ms: soon}\nroutes: {a: "
       "b}\ndead_letter_topic: dlq\n" +
           tail,
       "kafka.session.timeout.ms: "},
      {"kafka: {bootstrap.servers: b, group.id: g}\nroutes: {a: b}\ndead_letter_topic: dlq\n" +
           tail,
       "kafka.group.id: is set by the bridge itself and cannot be overridden (use group_id)"},
      {"kafka: {bootstrap.servers: b, enable.auto.commit: true}\nroutes: {a: "
       "b}\ndead_letter_topic: dlq\n" +
           tail,
       "kafka.enable.auto.commit: is set by the bridge itself"},
      {"kafka: {bootstrap.servers: b}\nroutes: {}\ndead_letter_topic: dlq\n" + tail,
       "routes: must be a non-empty map of delay topic -> target topic"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: \"\"}\ndead_letter_topic: dlq\n" + tail,
       "routes.a: must be a topic name, got an empty value"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: \"b c\"}\ndead_letter_topic: dlq\n" + tail,
       "routes.a: a topic name has only the characters a-z, A-Z, 0-9, '.', '_' and '-', got "
       "\"b c\""},
      {"kafka: {bootstrap.servers: b}\nroutes: {\"a/b\": b}\ndead_letter_topic: dlq\n" + tail,
       "routes.a/b: a topic name has only the characters"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\nallowed_targets: [c, \"..\"]\n"
       "dead_letter_topic: dlq\n" +
           tail,
       "allowed_targets[1]: a topic name cannot be \"..\""},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\ndead_letter_topic: " +
           std::string(250, 'd') + "\n" + tail,
       "dead_letter_topic: a topic name is at most 249 characters, got 250"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\nallowed_targets: c\ndead_letter_topic: "
       "dlq\n" +
           tail,
       "allowed_targets: must be a list of topic names"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\nallowed_targets: [c, "
       "[d]]\ndead_letter_topic: dlq\n" +
           tail,
       "allowed_targets[1]: must be a single value"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\ndead_letter_topic: a\n" + tail,
       "routes.a: delay topic \"a\" is also a target or the dead_letter_topic"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b, b: c}\ndead_letter_topic: dlq\n" + tail,
       "routes.b: delay topic \"b\" is also a target"},
      {"kafka: {bootstrap.servers: b}\nroutes: {a: b}\ndead_letter_topic: dlq\nstorage:\n  dir:\n",
       "storage.dir: must have a value"},
      {"kafka: [1, 2\n", "YAML syntax error at line"},
      {"", "the configuration is empty"},
      {"- just\n- a list\n", "(top level): must be a map"},
  };
  for (const auto& c : cases) {
    const std::string error = ErrorOf(c.yaml);
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected \"" << c.expected << "\" in \"" << error << "\" for:\n"
        << c.yaml;
  }
}

TEST(ConfigTest, MembershipAndRetentionKeys) {
  auto defaults = ParseConfig(kMinimal);
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_FALSE(defaults->group_instance_id.has_value());  // derived at start
  EXPECT_EQ(defaults->retention_margin_ms, 86'400'000);
  EXPECT_FALSE(defaults->allow_unsafe_retention);
  auto set = ParseConfig(std::string(kMinimal) +
                         "group_instance_id: bridge-7\nretention_margin: 2h\n"
                         "allow_unsafe_retention: true\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->group_instance_id, "bridge-7");
  EXPECT_EQ(set->retention_margin_ms, 7'200'000);
  EXPECT_TRUE(set->allow_unsafe_retention);
  auto off = ParseConfig(std::string(kMinimal) + "group_instance_id: \"\"\n");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->group_instance_id, "");  // static membership off
  auto owned = ParseConfig(
      "kafka: {bootstrap.servers: b, group.instance.id: x}\nroutes: {a: b}\n"
      "dead_letter_topic: dlq\nstorage: {dir: d}\n");
  ASSERT_FALSE(owned.ok());
  EXPECT_NE(owned.status().message().find("kafka.group.instance.id: is set by the bridge itself "
                                          "and cannot be overridden (use group_instance_id)"),
            std::string::npos)
      << owned.status().message();
}

TEST(ConfigTest, DeliveryGuaranteeKeys) {
  auto defaults = ParseConfig(kMinimal);
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_FALSE(defaults->exactly_once());
  EXPECT_EQ(defaults->transaction_interval_ms, 100);
  EXPECT_EQ(defaults->transaction_timeout_ms, 10'000);
  EXPECT_EQ(defaults->transaction_max_records, 50'000u);
  auto set =
      ParseConfig(With("delivery:\n  guarantee: exactly_once\n  transaction_interval_ms: 250\n"
                       "  transaction_timeout_ms: 30000\n  transaction_max_records: 500"));
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->exactly_once());
  EXPECT_EQ(set->transaction_interval_ms, 250);
  EXPECT_EQ(set->transaction_timeout_ms, 30'000);
  EXPECT_EQ(set->transaction_max_records, 500u);
  EXPECT_NE(DescribeConfig(*set).find("delivery.guarantee=exactly_once"), std::string::npos);

  EXPECT_EQ(ErrorOf(With("delivery:\n  guarantee: twice")),
            "delivery.guarantee: must be at_least_once or exactly_once, got \"twice\"");
  EXPECT_EQ(ErrorOf(With("delivery:\n  guarantee: exactly_once\n  transaction_timeout_ms: 1100")),
            "delivery.transaction_timeout_ms: must be at least 1000 + 2 x "
            "delivery.transaction_interval_ms (1200)");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: embedded}\nroutes: {a: b}\n"
                    "dead_letter_topic: dlq\nstorage: {dir: d}\n"
                    "delivery: {guarantee: exactly_once}\n"),
            "delivery.guarantee: exactly_once needs a real Kafka cluster: the embedded broker "
            "(librdkafka's mock cluster) only imitates transactions");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b, isolation.level: read_uncommitted}\n"
                    "routes: {a: b}\ndead_letter_topic: dlq\nstorage: {dir: d}\n"
                    "delivery: {guarantee: exactly_once}\n"),
            "kafka.isolation.level: must be read_committed with delivery.guarantee exactly_once: "
            "the committed progress is read only once the transactions holding it are settled");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b, transactional.id: t}\nroutes: {a: b}\n"
                    "dead_letter_topic: dlq\nstorage: {dir: d}\n"),
            "kafka.transactional.id: is set by the bridge itself and cannot be overridden (set "
            "delivery.guarantee: exactly_once)");
}

// Stable across restarts, different per storage.dir, and a valid group.instance.id.
TEST(ConfigTest, DefaultGroupInstanceIdFollowsHostAndStorageDir) {
  EXPECT_EQ(DefaultGroupInstanceId("/var/lib/delaybridge"),
            DefaultGroupInstanceId("/var/lib/delaybridge/"));
  EXPECT_NE(DefaultGroupInstanceId("/var/lib/a"), DefaultGroupInstanceId("/var/lib/b"));
  EXPECT_EQ(DefaultGroupInstanceId("d").rfind("delaybridge-", 0), 0u);
}

TEST(ConfigTest, MissingFileIsNotFound) {
  auto config = LoadConfigFile("/nonexistent/delaybridge.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Status::Code::kNotFound);
  EXPECT_NE(config.status().message().find("/nonexistent/delaybridge.yaml"), std::string::npos);
}

TEST(ConfigTest, ADirectoryIsNotAConfigFile) {
  testing::TempDir dir("config_test");
  auto config = LoadConfigFile(dir.path());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "config file " + dir.path() + ": " + dir.path() + " is not a regular file");
}

// Secrets can stay out of the file: ${NAME} reads the environment, <property>_file a file; the
// start-up summary still masks them.
TEST(ConfigTest, KafkaSecretsComeFromTheEnvironmentOrAFile) {
  testing::TempDir dir("config_test");
  const std::string password_file = dir.File("password");
  std::ofstream(password_file) << "from-a-file\n";
  ASSERT_EQ(::setenv("DELAYBRIDGE_TEST_USER", "alice", 1), 0);
  ASSERT_EQ(::setenv("DELAYBRIDGE_TEST_SECRET", "from-the-env", 1), 0);
  auto config = ParseConfig(
      "kafka:\n  bootstrap.servers: b\n  sasl.username: ${DELAYBRIDGE_TEST_USER}\n"
      "  ssl.key.password: pre-${DELAYBRIDGE_TEST_SECRET}-post\n"
      "  sasl.password_file: " +
      password_file + "\nroutes: {a: b}\ndead_letter_topic: dlq\nstorage: {dir: d}\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->kafka.at("sasl.username"), "alice");
  EXPECT_EQ(config->kafka.at("ssl.key.password"), "pre-from-the-env-post");
  EXPECT_EQ(config->kafka.at("sasl.password"), "from-a-file");
  EXPECT_FALSE(config->kafka.count("sasl.password_file"));
  const std::string summary = DescribeConfig(*config);
  EXPECT_EQ(summary.find("from-a-file"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("from-the-env"), std::string::npos) << summary;
  EXPECT_NE(summary.find("sasl.username: alice"), std::string::npos) << summary;

  const auto error = [](const std::string& kafka) {
    auto bad = ParseConfig("kafka:\n  bootstrap.servers: b\n" + kafka +
                           "routes: {a: b}\ndead_letter_topic: dlq\nstorage: {dir: d}\n");
    return bad.ok() ? std::string("(accepted)") : bad.status().message();
  };
  EXPECT_EQ(error("  sasl.password: ${DELAYBRIDGE_TEST_UNSET}\n"),
            "kafka.sasl.password: environment variable DELAYBRIDGE_TEST_UNSET is not set");
  EXPECT_EQ(error("  sasl.password: ${not a name}\n"),
            "kafka.sasl.password: ${not a name} does not name an environment variable");
  EXPECT_EQ(error("  sasl.password: ${OPEN\n"),
            "kafka.sasl.password: has \"${\" without a closing \"}\"");
  EXPECT_EQ(error("  sasl.password_file: " + dir.File("missing") + "\n"),
            "kafka.sasl.password_file: cannot read " + dir.File("missing") +
                ": No such file or directory");
  EXPECT_EQ(error("  sasl.password: x\n  sasl.password_file: " + password_file + "\n"),
            "kafka.sasl.password_file: sets kafka.sasl.password a second time");
}

// A _file key reads a regular file of bounded size: a directory, a device that never ends or a
// file too large for a secret is refused with the key named, never read or thrown on.
TEST(ConfigTest, KafkaValueFileMustBeASmallRegularFile) {
  testing::TempDir dir("config_test");
  const auto error = [](const std::string& file) {
    auto bad = ParseConfig("kafka:\n  bootstrap.servers: b\n  sasl.password_file: " + file +
                           "\nroutes: {a: b}\ndead_letter_topic: dlq\nstorage: {dir: d}\n");
    return bad.ok() ? std::string("(accepted)") : bad.status().message();
  };
  EXPECT_EQ(error(dir.path()),
            "kafka.sasl.password_file: " + dir.path() + " is not a regular file");
  EXPECT_EQ(error("/dev/zero"), "kafka.sasl.password_file: /dev/zero is not a regular file");
  const std::string large = dir.File("large");
  std::ofstream(large) << std::string(kMaxKafkaValueFileBytes + 1, 'x');
  EXPECT_EQ(error(large), "kafka.sasl.password_file: " + large + " is larger than " +
                              std::to_string(kMaxKafkaValueFileBytes) + " bytes");
}

TEST(ConfigTest, MetricsListenIsAnAddressOrEmptyForNone) {
  const auto parse = [](const std::string& metrics) {
    return ParseConfig(
        "kafka: {bootstrap.servers: b}\nroutes: {a: b}\ndead_letter_topic: dlq\n"
        "storage: {dir: d}\n" +
        metrics);
  };
  auto by_default = parse("");
  ASSERT_TRUE(by_default.ok()) << by_default.status().ToString();
  ASSERT_TRUE(by_default->metrics_listen.has_value());
  EXPECT_EQ(by_default->metrics_listen->ToString(), "127.0.0.1:9464");
  auto any = parse("metrics: {listen: \"0.0.0.0:0\"}\n");
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->metrics_listen->ToString(), "0.0.0.0:0");
  EXPECT_NE(DescribeConfig(*any).find("metrics.listen=0.0.0.0:0"), std::string::npos)
      << DescribeConfig(*any);
  auto off = parse("metrics: {listen: \"\"}\n");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->metrics_listen.has_value());
  EXPECT_NE(DescribeConfig(*off).find("metrics.listen=(off)"), std::string::npos);
  auto bad = parse("metrics: {listen: \"metrics.example:9464\"}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "metrics.listen: \"metrics.example:9464\" does not name an IP address (IPv6 goes in "
            "brackets) (host:port or [v6 address]:port; port 0 picks a free one)");
}

TEST(ConfigTest, DescribeMasksSecrets) {
  auto config = ParseConfig(
      "kafka: {bootstrap.servers: b, sasl.password: hunter2, sasl.username: u}\n"
      "routes: {a: b}\ndead_letter_topic: dlq\nstorage: {dir: d}\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const std::string text = DescribeConfig(*config);
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  EXPECT_NE(text.find("sasl.password: ***"), std::string::npos) << text;
  EXPECT_NE(text.find("sasl.username: u"), std::string::npos) << text;
}

TEST(ConfigTest, SecretKafkaKeysAreEveryKeyOrTokenNotOnlyPasswords) {
  for (const char* key : {"sasl.password", "ssl.key.password", "ssl.key.pem", "ssl.certificate.pem",
                          "ssl.keystore.password", "ssl_key", "sasl.oauthbearer.extensions",
                          "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config",
                          "sasl.jaas.config", "some.token", "ssl.ca.pem"}) {
    EXPECT_TRUE(IsSecretKafkaKey(key)) << key;
  }
  for (const char* key : {"bootstrap.servers", "security.protocol", "sasl.mechanism",
                          "sasl.username", "ssl.ca.location", "ssl.key.location",
                          "message.max.bytes", "sasl.oauthbearer.token.endpoint.url"}) {
    EXPECT_FALSE(IsSecretKafkaKey(key)) << key;
  }
}

TEST(ConfigTest, MaxRecordBytesFitsInWhatTheProducerMaySend) {
  const std::string base =
      "kafka: {bootstrap.servers: b}\nroutes: {a: b}\ndead_letter_topic: dlq\n"
      "storage: {dir: d}\n";
  auto defaults = ParseConfig(base);
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->producer_message_max_bytes, 1'048'588);  // Kafka's max.message.bytes
  EXPECT_EQ(defaults->max_record_bytes + kDeliveryFramingBytes, 1024u * 1024);

  auto too_large = ParseConfig(base + "max_record_bytes: 1048576\n");
  ASSERT_FALSE(too_large.ok());
  EXPECT_NE(too_large.status().message().find(
                "max_record_bytes: 1048576 does not fit in the producer's message.max.bytes "
                "1048588 less 1024 bytes of framing"),
            std::string::npos)
      << too_large.status().ToString();

  auto raised = ParseConfig(
      "kafka: {bootstrap.servers: b, message.max.bytes: 4000000}\nroutes: {a: b}\n"
      "dead_letter_topic: dlq\nstorage: {dir: d}\nmax_record_bytes: 3000000\n");
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(raised->producer_message_max_bytes, 4'000'000);
}

// docs/configuration.md's key table and the parser's are the same keys: every key the parser
// reads is documented, and every documented key is read (or lies inside a map it reads whole).
TEST(ConfigTest, TheDocumentedKeysAreTheKeysTheParserReads) {
  std::ifstream doc(std::string(DELAYBRIDGE_SOURCE_DIR) + "/docs/configuration.md");
  ASSERT_TRUE(doc) << "docs/configuration.md not found";
  std::set<std::string> documented;
  bool in_keys = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("## ")) in_keys = line == "## Keys";
    if (!in_keys || !line.starts_with("| `")) continue;
    documented.insert(line.substr(3, line.find('`', 3) - 3));
  }
  const std::vector<std::string> paths = ConfigKeyPaths();
  const std::set<std::string> read(paths.begin(), paths.end());
  for (const std::string& key : read) {
    EXPECT_TRUE(documented.count(key)) << key << " is read but not in docs/configuration.md";
  }
  for (const std::string& key : documented) {
    const bool inside = std::any_of(read.begin(), read.end(), [&key](const std::string& r) {
      return key == r || key.starts_with(r + ".");
    });
    EXPECT_TRUE(inside) << key << " is documented but no key of the parser reads it";
  }
  EXPECT_GE(documented.size(), read.size());
}

}  // namespace
}  // namespace delaybridge::plugin
