// Delay header parsing: how x-delay, x-deliver-at and x-target-topic become a delivery time
// and a target, and every way they can be wrong.
#include "plugin/delay_headers.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace delaybridge::plugin {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;
constexpr int64_t kMaxDelay = 3'600'000;  // 1 h
const std::set<std::string> kAllowed = {"delivered", "orders"};

DelayParse Parse(std::vector<HeaderView> headers,
                 std::optional<int64_t> timestamp_ms = kNow - 1000) {
  return ParseDelayHeaders(headers, timestamp_ms, kNow, "delivered",
                           DelayPolicy{kMaxDelay, &kAllowed});
}

int64_t DeliverAt(const DelayParse& p) {
  EXPECT_TRUE(std::holds_alternative<DelayRequest>(p)) << std::get<std::string>(p);
  return std::holds_alternative<DelayRequest>(p) ? std::get<DelayRequest>(p).deliver_at_ms : -1;
}

std::string Reason(const DelayParse& p) {
  EXPECT_TRUE(std::holds_alternative<std::string>(p));
  return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : "";
}

TEST(DelayHeadersTest, NoHeaderMeansWhenProducedToTheRouteTarget) {
  const DelayParse p = Parse({{"other", "x"}}, kNow - 1000);
  EXPECT_EQ(DeliverAt(p), kNow - 1000);
  EXPECT_EQ(std::get<DelayRequest>(p).target_topic, "delivered");
  EXPECT_EQ(DeliverAt(Parse({{"other", "x"}}, std::nullopt)), kNow);  // no timestamp: now
}

TEST(DelayHeadersTest, DelayCountsFromTheRecordTimestamp) {
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "5000"}}, kNow - 1000)), kNow + 4000);
  // In the past: kept as asked (the store delivers it now; lateness counts from it).
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "0"}}, kNow - 1000)), kNow - 1000);
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "5000"}}, std::nullopt)), kNow + 5000);
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "3600000"}}, kNow)), kNow + kMaxDelay);  // at the limit
}

TEST(DelayHeadersTest, DeliverAtIsAbsoluteAndWins) {
  EXPECT_EQ(DeliverAt(Parse({{"x-deliver-at", std::to_string(kNow + 777)}})), kNow + 777);
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "100"}, {"x-deliver-at", std::to_string(kNow + 9)}})),
            kNow + 9);
  EXPECT_EQ(DeliverAt(Parse({{"x-deliver-at", std::to_string(kNow + 9)}, {"x-delay", "bad"}})),
            kNow + 9);
  EXPECT_EQ(DeliverAt(Parse({{"x-deliver-at", "1"}})), 1);  // in the past: kept as asked
  EXPECT_EQ(DeliverAt(Parse({{"x-deliver-at", "0"}})), 0);
}

TEST(DelayHeadersTest, LastHeaderCounts) {
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "bad"}, {"x-delay", "2000"}}, kNow)), kNow + 2000);
  EXPECT_NE(Reason(Parse({{"x-delay", "2000"}, {"x-delay", "bad"}}, kNow)), "");
}

TEST(DelayHeadersTest, TargetTopicMustBeAllowed) {
  const DelayParse p = Parse({{"x-target-topic", "orders"}});
  EXPECT_EQ(std::get<DelayRequest>(p).target_topic, "orders");
  EXPECT_EQ(Reason(Parse({{"x-target-topic", "secrets"}})),
            "x-target-topic: \"secrets\" is not in allowed_targets");
  EXPECT_EQ(Reason(Parse({{"x-target-topic", ""}})),
            "x-target-topic: \"\" is not in allowed_targets");
  EXPECT_EQ(Reason(Parse({{"x-target-topic", std::nullopt}})), "x-target-topic: null value");
}

TEST(DelayHeadersTest, EveryBadValueHasAReason) {
  struct Case {
    std::vector<HeaderView> headers;
    std::string reason;
  };
  const std::string huge(100, '9');
  // One past max_delay after the default timestamp (kNow - 1000); outlives the views.
  const std::string too_far = std::to_string(kNow - 1000 + kMaxDelay + 1);
  const Case cases[] = {
      {{{"x-delay", "abc"}}, "x-delay: \"abc\" is not a decimal integer"},
      {{{"x-delay", ""}}, "x-delay: \"\" is not a decimal integer"},
      {{{"x-delay", "12ms"}}, "x-delay: \"12ms\" is not a decimal integer"},
      {{{"x-delay", " 12"}}, "x-delay: \" 12\" is not a decimal integer"},
      {{{"x-delay", "+12"}}, "x-delay: \"+12\" is not a decimal integer"},
      {{{"x-delay", "1.5"}}, "x-delay: \"1.5\" is not a decimal integer"},
      {{{"x-delay", std::nullopt}}, "x-delay: null value, expected decimal milliseconds"},
      {{{"x-delay", "-1"}}, "x-delay: negative delay \"-1\""},
      {{{"x-delay", "9223372036854775808"}},
       "x-delay: \"9223372036854775808\" overflows a 64-bit millisecond count"},
      {{{"x-delay", huge}}, "x-delay: \"" + huge.substr(0, 64) + "...\" overflows"},
      {{{"x-delay", "3600001"}}, "x-delay: 3600001 ms is over max_delay 3600000 ms"},
      {{{"x-deliver-at", "soon"}}, "x-deliver-at: \"soon\" is not a decimal integer"},
      {{{"x-deliver-at", "-5"}}, "x-deliver-at: negative epoch milliseconds \"-5\""},
      {{{"x-deliver-at", "99999999999999999999"}},
       "x-deliver-at: \"99999999999999999999\" overflows"},
      {{{"x-deliver-at", too_far}},
       "x-deliver-at: " + too_far +
           " is 3600001 ms after the record's timestamp, over max_delay 3600000 ms"},
  };
  for (const auto& c : cases) {
    const std::string reason = Reason(Parse(c.headers));
    EXPECT_EQ(reason.rfind(c.reason, 0), 0u)
        << "got \"" << reason << "\", want prefix \"" << c.reason << "\"";
  }
}

TEST(DelayHeadersTest, DelayOverflowingTheTimestampIsRejected) {
  const int64_t late_timestamp = std::numeric_limits<int64_t>::max() - 10;
  const DelayParse p = Parse({{"x-delay", "100"}}, late_timestamp);
  EXPECT_NE(Reason(p).find("overflows"), std::string::npos) << Reason(p);
}

// A new owner of a partition reads its records again later and must reach the same decision
// (docs/bridge.md, "Kafka holds the truth"): only the record decides, not the clock.
TEST(DelayHeadersTest, TheDecisionDependsOnTheRecordNotOnTheClock) {
  const std::string just_inside = std::to_string(kNow + kMaxDelay - 5);  // outlive the views
  const std::string just_outside = std::to_string(kNow + kMaxDelay + 5);
  const std::vector<std::vector<HeaderView>> records = {
      {{"x-delay", "1000"}},
      {{"x-delay", "3600000"}},
      {{"x-deliver-at", just_inside}},
      {{"x-deliver-at", just_outside}},
      {{"other", "x"}},
  };
  for (const auto& headers : records) {
    for (int64_t later : {int64_t{0}, int64_t{1}, kMaxDelay, 30 * kMaxDelay}) {
      const DelayParse first =
          ParseDelayHeaders(headers, kNow, kNow, "delivered", DelayPolicy{kMaxDelay, &kAllowed});
      const DelayParse again = ParseDelayHeaders(headers, kNow, kNow + later, "delivered",
                                                 DelayPolicy{kMaxDelay, &kAllowed});
      ASSERT_EQ(first.index(), again.index()) << "read again " << later << " ms later";
      if (std::holds_alternative<DelayRequest>(first)) {
        EXPECT_EQ(DeliverAt(first), DeliverAt(again));
      }
    }
  }
  // max_delay counts from the timestamp, as the topic's retention does.
  EXPECT_EQ(DeliverAt(Parse({{"x-delay", "1000"}}, kNow + kMaxDelay)), kNow + kMaxDelay + 1000);
}

TEST(DelayHeadersTest, ControlHeadersAreRecognised) {
  EXPECT_TRUE(IsDelayControlHeader("x-delay"));
  EXPECT_TRUE(IsDelayControlHeader("x-deliver-at"));
  EXPECT_TRUE(IsDelayControlHeader("x-target-topic"));
  EXPECT_TRUE(IsDelayControlHeader("x-delay-cancel"));
  EXPECT_FALSE(IsDelayControlHeader("x-delay-source"));
  EXPECT_FALSE(IsDelayControlHeader("X-Delay"));  // Kafka header names are case-sensitive
  EXPECT_FALSE(IsDelayControlHeader("trace-id"));
}

// A cancel of delayed/3/<offset>, read as the record at offset 42 of delayed/3.
std::optional<std::variant<int64_t, std::string>> ParseCancel(std::vector<HeaderView> headers) {
  return ParseCancelHeader(headers, "delayed", 3, 42);
}

std::string CancelReason(std::vector<HeaderView> headers) {
  const auto parsed = ParseCancel(std::move(headers));
  EXPECT_TRUE(parsed && std::holds_alternative<std::string>(*parsed));
  return parsed && std::holds_alternative<std::string>(*parsed) ? std::get<std::string>(*parsed)
                                                                : "";
}

TEST(DelayHeadersTest, ACancelNamesAnEarlierRecordOfItsOwnPartition) {
  EXPECT_FALSE(ParseCancel({{"x-delay", "5"}}).has_value());  // not a cancel
  EXPECT_EQ(ParseCancel({{"x-delay-cancel", "delayed/3/41"}}),
            (std::optional<std::variant<int64_t, std::string>>(int64_t{41})));
  EXPECT_EQ(ParseCancel({{"x-delay-cancel", "delayed/3/0"}}),
            (std::optional<std::variant<int64_t, std::string>>(int64_t{0})));
  // The last one counts.
  EXPECT_EQ(ParseCancel({{"x-delay-cancel", "bad"}, {"x-delay-cancel", "delayed/3/7"}}),
            (std::optional<std::variant<int64_t, std::string>>(int64_t{7})));
}

TEST(DelayHeadersTest, EveryBadCancelIdHasAReason) {
  for (const char* id :
       {"", "delayed", "delayed/3", "/3/4", "delayed//4", "delayed/3/", "delayed/x/4",
        "delayed/3/4x", "delayed/-3/4", "delayed/3/-4", "delayed/3/+4",
        "delayed/3/99999999999999999999", "delayed/99999999999/4"}) {
    const std::string reason = CancelReason({{"x-delay-cancel", id}});
    EXPECT_EQ(reason.rfind("x-delay-cancel: ", 0), 0u) << id << ": " << reason;
  }
  EXPECT_EQ(CancelReason({{"x-delay-cancel", std::nullopt}}), "x-delay-cancel: null value");
  EXPECT_NE(CancelReason({{"x-delay-cancel", "delayed/2/4"}}).find("another partition"),
            std::string::npos);
  EXPECT_NE(CancelReason({{"x-delay-cancel", "orders/3/4"}}).find("another partition"),
            std::string::npos);
  // A cancel always follows its target: its own offset and later ones cannot be one.
  EXPECT_NE(CancelReason({{"x-delay-cancel", "delayed/3/42"}}).find("not before"),
            std::string::npos);
  EXPECT_NE(CancelReason({{"x-delay-cancel", "delayed/3/43"}}).find("not before"),
            std::string::npos);
}

}  // namespace
}  // namespace delaybridge::plugin
