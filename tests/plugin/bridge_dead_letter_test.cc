// Bad input end to end: every kind of invalid record lands in the dead-letter topic with the
// original key, value and headers plus x-delay-error naming the reason, the bridge keeps
// running, and good records around them (including one without any delay header) are
// delivered.
#include <gtest/gtest.h>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BridgeDeadLetterTest : public BridgeFixture {};

TEST_F(BridgeDeadLetterTest, EveryBadInputIsDeadLetteredWithItsReason) {
  ASSERT_NO_FATAL_FAILURE(SetUpBridge({.max_record_bytes = 10'000}));
  ASSERT_NO_FATAL_FAILURE(StartBridge());

  const int64_t now = NowMs();
  struct Case {
    std::string name;
    std::vector<TestHeader> headers;
    std::string value;
    std::string reason_prefix;
  };
  const std::vector<Case> cases = {
      {"garbage", {{"x-delay", "soon"}}, "v", "x-delay: \"soon\" is not a decimal integer"},
      {"negative", {{"x-delay", "-5"}}, "v", "x-delay: negative delay \"-5\""},
      {"overflow",
       {{"x-delay", "99999999999999999999"}},
       "v",
       "x-delay: \"99999999999999999999\" overflows"},
      {"too-long",
       {{"x-delay", "3600001"}},
       "v",
       "x-delay: 3600001 ms is over max_delay 3600000 ms"},
      {"null-delay", {{"x-delay", std::nullopt}}, "v", "x-delay: null value"},
      {"at-garbage", {{"x-deliver-at", "tomorrow"}}, "v", "x-deliver-at: \"tomorrow\" is not"},
      {"at-negative", {{"x-deliver-at", "-1"}}, "v", "x-deliver-at: negative epoch milliseconds"},
      {"at-too-far", {{"x-deliver-at", std::to_string(now + 7'200'000)}}, "v", "x-deliver-at: "},
      {"forbidden-target",
       {{"x-target-topic", "secret"}},
       "v",
       "x-target-topic: \"secret\" is not in allowed_targets"},
      {"oversized", {{"x-delay", "10"}}, std::string(20'000, 'x'), "record: "},
  };
  for (const auto& c : cases) {
    TestRecord r;
    r.topic = delay_topic_;
    r.key = c.name;
    r.value = c.value;
    r.headers = c.headers;
    r.headers.push_back({"case", c.name});
    ASSERT_TRUE(producer_->Produce(r).ok());
  }
  TestRecord no_header;  // deliver now
  no_header.topic = delay_topic_;
  no_header.key = "plain";
  no_header.value = "no delay header";
  ASSERT_TRUE(producer_->Produce(no_header).ok());
  TestRecord good;
  good.topic = delay_topic_;
  good.key = "good";
  good.value = "after the bad ones";
  good.headers = {{"x-delay", "200"}};
  ASSERT_TRUE(producer_->Produce(good).ok());
  ASSERT_TRUE(producer_->Flush(seconds(30)).ok());

  const std::vector<TestRecord>& got = received_;
  auto count_in = [](const std::vector<TestRecord>& records, const std::string& topic) {
    return std::count_if(records.begin(), records.end(),
                         [&topic](const TestRecord& r) { return r.topic == topic; });
  };
  const auto all_arrived = [&] {
    return count_in(got, dlq_topic_) >= static_cast<long>(cases.size()) &&
           count_in(got, target_topic_) >= 2;
  };
  ReceiveUntil(all_arrived, seconds(60));
  const bool all = all_arrived();
  ReceiveFor(seconds(1));
  ASSERT_TRUE(all) << "dead letters: " << count_in(got, dlq_topic_)
                   << ", delivered: " << count_in(got, target_topic_);
  EXPECT_EQ(count_in(got, dlq_topic_), static_cast<long>(cases.size()));
  EXPECT_EQ(count_in(got, target_topic_), 2);
  EXPECT_EQ(count_in(got, alt_topic_), 0);

  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto it = std::find_if(got.begin(), got.end(), [&](const TestRecord& r) {
      return r.topic == dlq_topic_ && r.key == c.name;
    });
    ASSERT_NE(it, got.end());
    const auto error = it->Header("x-delay-error");
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->rfind(c.reason_prefix, 0), 0u) << *error;
    EXPECT_EQ(it->value, std::optional<std::string>(c.value));
    // Original headers first, in order, then the reason and the source.
    ASSERT_EQ(it->headers.size(), c.headers.size() + 3);
    for (size_t i = 0; i < c.headers.size(); ++i) EXPECT_EQ(it->headers[i], c.headers[i]);
    EXPECT_EQ(it->Header("case"), std::optional<std::string>(c.name));
    const auto source = it->Header("x-delay-source");
    ASSERT_TRUE(source.has_value());
    EXPECT_EQ(source->rfind(delay_topic_ + "/", 0), 0u) << *source;
  }
  EXPECT_EQ(bridge_->CountInLog("WARN  dead letter "), cases.size());
  EXPECT_TRUE(bridge_->running());
  ASSERT_NO_FATAL_FAILURE(StopBridge());
  EXPECT_NE(bridge_->Log().find("dead_lettered=" + std::to_string(cases.size())),
            std::string::npos);
}

}  // namespace
}  // namespace delaybridge::testing
