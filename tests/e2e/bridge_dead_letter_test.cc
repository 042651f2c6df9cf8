// Bad input through the real bridge: every malformed, out-of-range, disallowed or oversized
// record lands in the dead-letter topic exactly once, with its key, value and original headers
// and an x-delay-error header saying why; none reaches a target topic; good records around them
// are still delivered and the bridge keeps running.
#include <iostream>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint32_t kMaxRecordBytes = 4096;

struct BadCase {
  std::string name;
  std::vector<TestHeader> headers;
  std::vector<std::string> reason_contains;  // fragments the x-delay-error value must contain
  size_t value_bytes = 32;
};

std::vector<BadCase> BadCases(int64_t now_ms) {
  const std::string two_hours_ahead = std::to_string(now_ms + 2 * 3600 * 1000);
  return {
      {"delay-not-a-number", {{"x-delay", "soon"}}, {"x-delay", "not a decimal integer"}},
      {"delay-empty", {{"x-delay", ""}}, {"x-delay", "not a decimal integer"}},
      {"delay-negative", {{"x-delay", "-5"}}, {"x-delay", "negative"}},
      {"delay-over-max", {{"x-delay", "7200000"}}, {"x-delay", "max_delay"}},
      {"delay-overflow", {{"x-delay", "99999999999999999999"}}, {"x-delay", "overflow"}},
      {"delay-negative-overflow", {{"x-delay", "-99999999999999999999"}}, {"x-delay", "overflow"}},
      {"delay-null", {{"x-delay", std::nullopt}}, {"x-delay", "null"}},
      {"deliver-at-not-a-number",
       {{"x-deliver-at", "tomorrow 9:00"}},
       {"x-deliver-at", "not a decimal integer"}},
      {"deliver-at-negative", {{"x-deliver-at", "-1"}}, {"x-deliver-at", "negative"}},
      {"deliver-at-over-max", {{"x-deliver-at", two_hours_ahead}}, {"x-deliver-at", "max_delay"}},
      // x-deliver-at wins over a valid x-delay, so its garbage is what gets reported.
      {"deliver-at-bad-with-good-delay",
       {{"x-delay", "10"}, {"x-deliver-at", "12x"}},
       {"x-deliver-at", "not a decimal integer"}},
      {"target-not-allowed",
       {{"x-delay", "10"}, {"x-target-topic", "not-an-allowed-topic"}},
       {"x-target-topic", "allowed_targets"}},
      {"target-null", {{"x-target-topic", std::nullopt}}, {"x-target-topic", "null"}},
      {"oversized", {{"x-delay", "10"}}, {"max_record_bytes"}, 2 * kMaxRecordBytes},
  };
}

class BridgeDeadLetterTest : public RealBrokerBridgeFixture {};

TEST_F(BridgeDeadLetterTest, BadInputGoesToDeadLetterTopicWithReasons) {
  SetUpBridge({.delay_partitions = 3,
               .target_partitions = 3,
               .alt_partitions = 2,
               .max_record_bytes = kMaxRecordBytes});
  ASSERT_FALSE(HasFatalFailure());
  StartBridgeAndWaitReady();
  ASSERT_FALSE(HasFatalFailure());

  // Good and bad records interleaved: the bad ones must not disturb the good ones.
  DelayWorkload good(Spec(77, 2'000));
  const std::vector<BadCase> cases = BadCases(NowMs());
  for (size_t i = 0; i < cases.size(); ++i) {
    for (int g = 0; g < 5; ++g) ASSERT_TRUE(producer_->Produce(good.Next()).ok());
    TestRecord bad;
    bad.topic = delay_topic_;
    bad.key = "bad-key-" + std::to_string(i);
    bad.value = "bad=" + cases[i].name + "|" + std::string(cases[i].value_bytes, 'v');
    bad.headers = cases[i].headers;
    bad.headers.push_back({"trace-id", "bad-" + std::to_string(i)});
    ASSERT_TRUE(producer_->Produce(bad).ok());
  }
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());

  auto dead_letters = [&] {
    std::vector<const TestRecord*> out;
    for (const TestRecord& r : received_) {
      if (r.topic == dlq_topic_) out.push_back(&r);
    }
    return out;
  };
  ReceiveUntil(
      [&] {
        return (DistinctIdsReceived() == good.size() && dead_letters().size() >= cases.size()) ||
               !bridge_->running();
      },
      seconds(90));
  ReceiveFor(seconds(3));
  ASSERT_TRUE(bridge_->running()) << "bridge died on bad input (log tail below)";

  for (size_t i = 0; i < cases.size(); ++i) {
    const BadCase& bad = cases[i];
    SCOPED_TRACE("case " + bad.name);
    const std::string value_prefix = "bad=" + bad.name + "|";
    std::vector<const TestRecord*> copies;
    for (const TestRecord& r : received_) {
      if (r.value && r.value->starts_with(value_prefix)) copies.push_back(&r);
    }
    ASSERT_EQ(copies.size(), 1u) << "expected exactly one dead letter and no delivery";
    const TestRecord& dead = *copies.front();
    EXPECT_EQ(dead.topic, dlq_topic_);
    EXPECT_EQ(dead.key, "bad-key-" + std::to_string(i));
    EXPECT_EQ(dead.value.value_or("").size(), value_prefix.size() + bad.value_bytes);
    const std::optional<std::string> reason = dead.Header("x-delay-error");
    ASSERT_TRUE(reason.has_value()) << "no x-delay-error header";
    std::cout << bad.name << ": x-delay-error: " << *reason << "\n";
    for (const std::string& fragment : bad.reason_contains) {
      EXPECT_NE(reason->find(fragment), std::string::npos)
          << "reason \"" << *reason << "\" lacks \"" << fragment << "\"";
    }
    // The producer's own headers come back unchanged, delay headers included.
    std::vector<TestHeader> original;
    for (const auto& header : dead.headers) {
      if (header.name != "x-delay-error" && header.name != "x-delay-source") {
        original.push_back(header);
      }
    }
    std::vector<TestHeader> sent = bad.headers;
    sent.push_back({"trace-id", "bad-" + std::to_string(i)});
    EXPECT_EQ(original, sent);
    const std::optional<std::string> source = dead.Header("x-delay-source");
    ASSERT_TRUE(source.has_value()) << "no x-delay-source header";
    EXPECT_EQ(source->rfind(delay_topic_ + "/", 0), 0u) << *source;
  }

  std::vector<TestRecord> deliveries;
  for (const TestRecord& r : received_) {
    if (r.topic != dlq_topic_) deliveries.push_back(r);
  }
  const DeliveryReport report = good.CheckDeliveries(deliveries, TargetPartitions());
  std::cout << "good records around the bad ones: " << report.ToString() << "\n";
  EXPECT_EQ(report.missing(), 0u);
  EXPECT_EQ(report.duplicates, 0u);
  EXPECT_EQ(report.early, 0u);
  EXPECT_EQ(report.wrong_topic, 0u);
  EXPECT_EQ(report.wrong_content, 0u);
  EXPECT_EQ(report.unknown, 0u) << "a bad record reached a target topic";
}

}  // namespace
}  // namespace delaybridge::testing
