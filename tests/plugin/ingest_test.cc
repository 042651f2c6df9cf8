// Ingest decisions and dead letters: an accepted record keeps key, value and every header but
// the three delay headers and the ones only the bridge sets; every rejected one becomes a dead
// letter carrying the original record and the reason; a dead letter that cannot be produced
// whole is reduced to what identifies it.
#include "plugin/ingest.h"

#include <gtest/gtest.h>

#include "plugin/dead_letter.h"

namespace delaybridge::plugin {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;
const std::set<std::string> kAllowed = {"delivered", "orders"};

IngestPolicy Policy(uint32_t max_record_bytes = 4096) {
  return IngestPolicy{DelayPolicy{3'600'000, &kAllowed}, max_record_bytes};
}

IncomingRecord Incoming(std::vector<KafkaHeader> headers) {
  IncomingRecord in;
  in.topic = "delayed";
  in.partition = 3;
  in.offset = 42;
  in.timestamp_ms = kNow - 500;
  in.key = "k";
  in.value = "v";
  in.headers = std::move(headers);
  return in;
}

// A producer's own x-delay-source would come first in the delivery, so a consumer
// de-duplicating on it could be made to drop another record.
TEST(IngestTest, AcceptedRecordDropsTheDelayHeadersAndTheBridgesOwn) {
  const IncomingRecord in = Incoming({{"trace", "t1"},
                                      {"x-delay", "2000"},
                                      {"x-target-topic", "orders"},
                                      {"x-deliver-at", std::to_string(kNow + 3000)},
                                      {"null", std::nullopt},
                                      {"x-delay-source", "delayed/0/1"},
                                      {"x-delay-error", "forged"},
                                      {"x-delay-original-bytes", "1"}});
  IngestDecision d = DecideIngest(in, "delivered", Policy(), kNow);
  ASSERT_TRUE(std::holds_alternative<Accepted>(d)) << std::get<Rejected>(d).reason;
  const Accepted& a = std::get<Accepted>(d);
  auto decoded = DecodeDelayedRecord(a.encoded.bytes());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const DelayedRecord& record = *decoded;
  EXPECT_EQ(record.target_topic, "orders");
  EXPECT_EQ(record.requested_deliver_at_ms, kNow + 3000);
  EXPECT_EQ(record.key, std::optional<std::string>("k"));
  EXPECT_EQ(record.value, std::optional<std::string>("v"));
  const std::vector<KafkaHeader> kept = {{"trace", "t1"}, {"null", std::nullopt}};
  EXPECT_EQ(record.headers, kept);
  EXPECT_EQ(record.SourceId(), "delayed/3/42");
  EXPECT_EQ(a.encoded.SourceId(), "delayed/3/42");
  EXPECT_EQ(record.source_timestamp_ms, kNow - 500);
  EXPECT_EQ(a.encoded.requested_deliver_at_ms(), kNow + 3000);
}

TEST(IngestTest, ARecordWithManyHeadersIsReadWhole) {
  std::vector<KafkaHeader> headers;
  std::vector<KafkaHeader> kept;
  for (int i = 0; i < 20; ++i) {
    std::string name = "h";  // appended: GCC 12 at -O3 reports a false -Wrestrict for "h" + ...
    name += std::to_string(i);
    headers.push_back({name, std::to_string(i)});
    kept.push_back(headers.back());
  }
  headers.push_back({"x-delay", "1000"});
  headers.push_back({"x-delay", "2000"});  // the last one counts
  headers.push_back({"x-target-topic", "orders"});
  const IngestDecision d = DecideIngest(Incoming(headers), "delivered", Policy(), kNow);
  ASSERT_TRUE(std::holds_alternative<Accepted>(d)) << std::get<Rejected>(d).reason;
  auto decoded = DecodeDelayedRecord(std::get<Accepted>(d).encoded.bytes());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->requested_deliver_at_ms, kNow - 500 + 2000);
  EXPECT_EQ(decoded->target_topic, "orders");
  EXPECT_EQ(decoded->headers, kept);
}

TEST(IngestTest, EveryRejectionHasItsReason) {
  struct Case {
    std::vector<KafkaHeader> headers;
    std::string reason_prefix;
  };
  const Case cases[] = {
      {{{"x-delay", "soon"}}, "x-delay: \"soon\" is not a decimal integer"},
      {{{"x-delay", "-10"}}, "x-delay: negative delay"},
      {{{"x-delay", "99999999999999999999"}}, "x-delay: \"99999999999999999999\" overflows"},
      {{{"x-delay", "3600001"}}, "x-delay: 3600001 ms is over max_delay"},
      {{{"x-deliver-at", "x"}}, "x-deliver-at: \"x\" is not a decimal integer"},
      {{{"x-target-topic", "elsewhere"}},
       "x-target-topic: \"elsewhere\" is not in allowed_targets"},
  };
  for (const auto& c : cases) {
    const IngestDecision d = DecideIngest(Incoming(c.headers), "delivered", Policy(), kNow);
    ASSERT_TRUE(std::holds_alternative<Rejected>(d)) << c.reason_prefix;
    EXPECT_EQ(std::get<Rejected>(d).reason.rfind(c.reason_prefix, 0), 0u)
        << std::get<Rejected>(d).reason;
  }
}

TEST(IngestTest, OversizedRecordIsRejected) {
  IncomingRecord in = Incoming({{"x-delay", "10"}});
  in.value = std::string(5000, 'x');
  const IngestDecision d = DecideIngest(in, "delivered", Policy(4096), kNow);
  ASSERT_TRUE(std::holds_alternative<Rejected>(d));
  EXPECT_NE(std::get<Rejected>(d).reason.find("over max_record_bytes 4096"), std::string::npos)
      << std::get<Rejected>(d).reason;
}

TEST(IngestTest, RecordWithoutTimestampCountsDelayFromNow) {
  IncomingRecord in = Incoming({{"x-delay", "1000"}});
  in.timestamp_ms.reset();
  const IngestDecision d = DecideIngest(in, "delivered", Policy(), kNow);
  ASSERT_TRUE(std::holds_alternative<Accepted>(d));
  EXPECT_EQ(std::get<Accepted>(d).encoded.requested_deliver_at_ms(), kNow + 1000);
  EXPECT_EQ(std::get<Accepted>(d).encoded.source_timestamp_ms(), -1);
}

TEST(DeadLetterTest, KeepsTheOriginalAndAddsTheReason) {
  IncomingRecord in = Incoming(
      {{"x-delay", "soon"}, {"x-delay-error", "forged"}, {"trace", "t"}, {"x-delay-source", "a"}});
  in.key.reset();
  const DelayedRecord dl = MakeDeadLetter(in, "x-delay: bad", "delayed.dlq");
  EXPECT_EQ(dl.target_topic, "delayed.dlq");
  EXPECT_FALSE(dl.key.has_value());
  EXPECT_EQ(dl.value, std::optional<std::string>("v"));
  const std::vector<KafkaHeader> headers = {
      {"x-delay", "soon"}, {"trace", "t"}, {"x-delay-error", "x-delay: bad"}};
  EXPECT_EQ(dl.headers, headers);
  EXPECT_EQ(dl.SourceId(), "delayed/3/42");
}

TEST(DeadLetterTest, OfADeliveryNamesTheRefusal) {
  DelayedRecord record;
  record.target_topic = "orders";
  record.key = "k";
  record.value = "v";
  record.headers = {{"trace", "t"}};
  const DelayedRecord dl = DeadLetterOfDelivery(record, "delivery: orders refused it", "dlq");
  EXPECT_EQ(dl.target_topic, "dlq");
  EXPECT_EQ(dl.value, record.value);
  const std::vector<KafkaHeader> headers = {{"trace", "t"},
                                            {"x-delay-error", "delivery: orders refused it"}};
  EXPECT_EQ(dl.headers, headers);
}

TEST(DeadLetterTest, ReducedKeepsWhatIdentifiesTheRecord) {
  IncomingRecord in = Incoming({{"x-delay", "soon"}, {"trace", "t"}});
  in.value = std::string(100, 'v');
  const DelayedRecord dl = MakeDeadLetter(in, "x-delay: bad", "dlq");
  const DelayedRecord reduced = ReduceDeadLetter(dl, "dead letter: too large");
  EXPECT_EQ(reduced.target_topic, "dlq");
  EXPECT_EQ(reduced.key, std::optional<std::string>("k"));
  EXPECT_FALSE(reduced.value.has_value());
  EXPECT_EQ(reduced.SourceId(), "delayed/3/42");
  // key 1 + value 100 + "x-delay" "soon" 11 + "trace" "t" 6; not the bridge's x-delay-error.
  const std::vector<KafkaHeader> headers = {
      {"x-delay-error", "x-delay: bad; dead letter: too large; value and headers dropped"},
      {"x-delay-original-bytes", "118"}};
  EXPECT_EQ(reduced.headers, headers);

  in.key = std::string(kReducedKeyMaxBytes + 1, 'k');
  EXPECT_FALSE(ReduceDeadLetter(MakeDeadLetter(in, "r", "dlq"), "r2").key.has_value());
}

TEST(IngestTest, ACancelIsNeitherStoredForDeliveryNorDeadLetteredUnlessItsIdIsBad) {
  IncomingRecord in = Incoming({{"x-delay", "5000"}, {"x-delay-cancel", "delayed/3/17"}});
  const IngestDecision d = DecideIngest(in, "delivered", Policy(), kNow);
  ASSERT_TRUE(std::holds_alternative<CancelRequested>(d));
  EXPECT_EQ(std::get<CancelRequested>(d).cancel, (StoredCancel{"delayed", 3, 42, 17, kNow - 500}));

  in.headers = {{"x-delay-cancel", "delayed/4/17"}};
  const IngestDecision other = DecideIngest(in, "delivered", Policy(), kNow);
  ASSERT_TRUE(std::holds_alternative<Rejected>(other));
  EXPECT_NE(std::get<Rejected>(other).reason.find("another partition"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::plugin
