#include "tools/load/load_options.h"

#include <gtest/gtest.h>

namespace delaybridge::load {
namespace {

Result<LoadOptions> Parse(std::vector<std::string> args) { return ParseLoadOptions(args); }

TEST(LoadOptions, ReadsAFullCommandLine) {
  Result<LoadOptions> options = Parse({"--bootstrap",
                                       "127.0.0.1:9092",
                                       "--mode",
                                       "passthrough",
                                       "--count",
                                       "500",
                                       "--rate",
                                       "2500.5",
                                       "--delay",
                                       "uniform:0..2s",
                                       "--payload-bytes",
                                       "64",
                                       "--keys",
                                       "0",
                                       "--headers",
                                       "mixed",
                                       "--timeout",
                                       "10s",
                                       "--lost-grace",
                                       "1s",
                                       "--warmup",
                                       "0",
                                       "--create-topics",
                                       "4",
                                       "--seed",
                                       "9",
                                       "-X",
                                       "linger.ms=1",
                                       "--json",
                                       "--delay-topic",
                                       "d",
                                       "--target-topic",
                                       "t",
                                       "--late-records",
                                       "late.txt",
                                       "--late-over",
                                       "20ms"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->mode, LoadMode::kPassthrough);
  EXPECT_EQ(options->count, 500);
  EXPECT_DOUBLE_EQ(options->rate_per_s, 2500.5);
  EXPECT_EQ(options->delay.max_ms(), 2'000);
  EXPECT_EQ(options->payload_bytes, 64);
  EXPECT_EQ(options->keys, 0);
  EXPECT_EQ(options->header_style, HeaderStyle::kMixed);
  EXPECT_EQ(options->timeout_ms, 10'000);
  EXPECT_EQ(options->lost_grace_ms, 1'000);
  EXPECT_EQ(options->warmup, 0);
  EXPECT_EQ(options->create_topics_partitions, 4);
  EXPECT_EQ(options->seed, 9u);
  ASSERT_EQ(options->rdkafka_overrides.size(), 1u);
  EXPECT_EQ(options->rdkafka_overrides[0].first, "linger.ms");
  EXPECT_EQ(options->rdkafka_overrides[0].second, "1");
  EXPECT_TRUE(options->json);
  EXPECT_EQ(options->delay_topic, "d");
  EXPECT_EQ(options->target_topic, "t");
  EXPECT_EQ(options->late_records_file, "late.txt");
  EXPECT_EQ(options->late_over_ms, 20);
}

TEST(LoadOptions, DefaultsAreTheDocumentedOnes) {
  Result<LoadOptions> options = Parse({"--bootstrap", "embedded", "--duration", "5s"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->mode, LoadMode::kBridge);
  EXPECT_EQ(options->duration_ms, 5'000);
  EXPECT_EQ(options->payload_bytes, 100);
  EXPECT_TRUE(options->late_records_file.empty());
  EXPECT_EQ(options->late_over_ms, 5);
  EXPECT_EQ(options->header_style, HeaderStyle::kDeliverAt);
  EXPECT_EQ(options->delay.spec(), "fixed:0");
  EXPECT_TRUE(options->consume);
}

TEST(LoadOptions, PipeModeRunsUntilStoppedOrForADuration) {
  Result<LoadOptions> until_stopped = Parse({"--bootstrap", "b", "--mode", "pipe"});
  ASSERT_TRUE(until_stopped.ok()) << until_stopped.status().ToString();
  EXPECT_EQ(until_stopped->mode, LoadMode::kPipe);
  EXPECT_EQ(until_stopped->duration_ms, 0);
  Result<LoadOptions> timed =
      Parse({"--bootstrap", "b", "--mode", "pipe", "--duration", "2m", "-X", "linger.ms=1"});
  ASSERT_TRUE(timed.ok()) << timed.status().ToString();
  EXPECT_EQ(timed->duration_ms, 120'000);
  EXPECT_EQ(timed->rdkafka_overrides.size(), 1u);
  EXPECT_STREQ(LoadModeName(timed->mode), "pipe");
}

TEST(LoadOptions, DirectModeProducesToTheTarget) {
  Result<LoadOptions> direct =
      Parse({"--bootstrap", "b", "--mode", "direct", "--count", "5", "--target-topic", "out"});
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_STREQ(LoadModeName(direct->mode), "direct");
  EXPECT_EQ(ProducedTopic(*direct), "out");
  // The delay topic plays no part: the target may have its default name, and a delay that is
  // zero however written is accepted.
  Result<LoadOptions> named_like_it = Parse({"--bootstrap", "b", "--mode", "direct", "--count", "5",
                                             "--target-topic", "delayed", "--delay", "fixed:0s"});
  ASSERT_TRUE(named_like_it.ok()) << named_like_it.status().ToString();
  EXPECT_EQ(ProducedTopic(*named_like_it), "delayed");
  Result<LoadOptions> bridge = Parse({"--bootstrap", "b", "--count", "5", "--delay-topic", "in"});
  ASSERT_TRUE(bridge.ok()) << bridge.status().ToString();
  EXPECT_EQ(ProducedTopic(*bridge), "in");
}

TEST(LoadOptions, HelpWinsOverEverythingElse) {
  Result<LoadOptions> options = Parse({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->show_help);
  EXPECT_NE(LoadUsage().find("--bootstrap"), std::string::npos);
}

struct BadCase {
  std::vector<std::string> args;
  const char* expected_in_message;
};

TEST(LoadOptions, RejectsBadInputNamingTheFlag) {
  const std::vector<BadCase> cases = {
      {{"--count", "5"}, "--bootstrap"},
      {{"--bootstrap", "b"}, "--count"},
      {{"--bootstrap", "b", "--count", "5", "--duration", "5s"}, "exactly one"},
      {{"--bootstrap", "b", "--count", "-5"}, "--count"},
      {{"--bootstrap", "b", "--count", "5x"}, "--count"},
      {{"--bootstrap", "b", "--count", "5", "--rate", "fast"}, "--rate"},
      {{"--bootstrap", "b", "--count", "5", "--headers", "x-foo"}, "--headers"},
      {{"--bootstrap", "b", "--count", "5", "--mode", "turbo"}, "--mode"},
      {{"--bootstrap", "b", "--count", "5", "--delay", "soon"}, "--delay"},
      {{"--bootstrap", "b", "--count", "5", "--payload-bytes", "27"}, "--payload-bytes"},
      {{"--bootstrap", "b", "--count", "5", "-X", "novalue"}, "-X"},
      {{"--bootstrap", "b", "--count", "5", "--target-topic", "delayed"}, "must differ"},
      {{"--bootstrap", "b", "--count", "5", "--mode", "passthrough", "--no-consume"},
       "--no-consume"},
      {{"--bootstrap", "b", "--count", "5", "--frobnicate", "1"}, "--frobnicate"},
      {{"--bootstrap", "b", "--count", "5", "--late-records", "f", "--no-consume"}, "--no-consume"},
      {{"--bootstrap", "b", "--count", "5", "--late-over", "later"}, "later"},
      {{"--bootstrap", "b", "--count", "5", "--late-over", "10ms"}, "--late-records"},
      {{"--bootstrap", "b", "--mode", "pipe", "--late-records", "f"}, "--late-records"},
      {{"--bootstrap", "b", "--count"}, "--count"},
      {{"--bootstrap", "b", "--count", "5", "--due-together", "5s", "--delay", "fixed:1s"},
       "exclude"},
      {{"--bootstrap", "b", "--count", "5", "--create-extra", "dlq"}, "--create-topics"},
      {{"--bootstrap", "b", "--mode", "pipe", "--count", "5"}, "--count"},
      {{"--bootstrap", "b", "--mode", "pipe", "--due-together", "5s"}, "--due-together"},
      {{"--mode", "pipe"}, "--bootstrap"},
      {{"--bootstrap", "b", "--mode", "pipe", "--target-topic", "delayed"}, "must differ"},
      {{"--bootstrap", "b", "--mode", "direct", "--count", "5", "--delay", "fixed:1s"}, "--delay"},
      {{"--bootstrap", "b", "--mode", "direct", "--count", "5", "--due-together", "5s"},
       "--due-together"},
      {{"--bootstrap", "b", "--mode", "direct", "--count", "5", "--wait-group", "g"},
       "--wait-group"},
      {{"--bootstrap", "b", "--mode", "direct", "--count", "5", "--no-consume"}, "--no-consume"},
      {{"--bootstrap", "b", "--mode", "direct", "--count", "5", "--delay-topic", "in"},
       "--delay-topic"},
  };
  for (const BadCase& bad : cases) {
    Result<LoadOptions> options = ParseLoadOptions(bad.args);
    ASSERT_FALSE(options.ok()) << bad.expected_in_message;
    EXPECT_EQ(options.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(options.status().message().find(bad.expected_in_message), std::string::npos)
        << options.status().message();
  }
}

}  // namespace
}  // namespace delaybridge::load
