// Records the broker refuses for good, through the real bridge and broker, at least once and
// exactly once: a 1,010,000-byte record (over librdkafka's default message.max.bytes, under the
// broker's max.message.bytes) is delivered whole; a record its target topic refuses as too large
// goes to the dead-letter topic, and a dead letter that topic refuses too arrives reduced (no
// value, no headers, its size and reasons). Nothing is retried forever: the partition goes on,
// the records around them are delivered once, and the bridge keeps running.
#include <iostream>

#include "tests/support/bridge_fixture.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

constexpr size_t kLargeValueBytes = 1'010'000;
constexpr char kSmallTopicLimit[] = "20000";  // max.message.bytes of the alt and dead-letter topics

class BridgeRefusedDeliveryTest : public RealBrokerBridgeFixture {
 protected:
  void Run(const std::string& extra_yaml) {
    // One alt partition: the records due there at once share a batch, and one too large for the
    // topic makes the broker refuse the batch whole.
    SetUpBridge({.delay_partitions = 2,
                 .target_partitions = 2,
                 .alt_partitions = 1,
                 .alt_topic_configs = {{"max.message.bytes", kSmallTopicLimit}},
                 .dlq_topic_configs = {{"max.message.bytes", kSmallTopicLimit}},
                 .extra_yaml = extra_yaml});
    ASSERT_FALSE(HasFatalFailure());
    StartBridgeAndWaitReady();
    ASSERT_FALSE(HasFatalFailure());
    // The test's own producer needs room for the large record too.
    auto large_producer =
        TestProducer::Create(cluster_->bootstrap(), {{"message.max.bytes", "1048588"}});
    ASSERT_TRUE(large_producer.ok()) << large_producer.status().ToString();

    DelayWorkload good(Spec(91, 2'000));
    const auto produce = [&](const std::string& name, size_t value_bytes,
                             std::vector<TestHeader> headers) {
      TestRecord r;
      r.topic = delay_topic_;
      r.key = "refusal-" + name;
      r.value = name + "|" + std::string(value_bytes, 'v');
      r.headers = std::move(headers);
      r.headers.push_back({"trace-id", name});
      ASSERT_TRUE((*large_producer)->Produce(r).ok());
      for (int g = 0; g < 20; ++g) ASSERT_TRUE(producer_->Produce(good.Next()).ok());
    };
    produce("large", kLargeValueBytes, {{"x-delay", "500"}});
    produce("fits-alt", 10'000, {{"x-delay", "500"}, {"x-target-topic", alt_topic_}});
    produce("refused-by-alt", 50'000, {{"x-delay", "500"}, {"x-target-topic", alt_topic_}});
    produce("bad-header", 30'000, {{"x-delay", "soon"}});
    ASSERT_TRUE((*large_producer)->Flush(seconds(30)).ok());
    ASSERT_TRUE(producer_->Flush(seconds(30)).ok());

    const auto copies = [&](const std::string& name) {
      std::vector<const TestRecord*> out;
      for (const TestRecord& r : received_) {
        if (r.key == "refusal-" + name) out.push_back(&r);
      }
      return out;
    };
    ReceiveUntil(
        [&] {
          return (DistinctIdsReceived() == good.size() && copies("large").size() == 1 &&
                  copies("fits-alt").size() == 1 && copies("refused-by-alt").size() == 1 &&
                  copies("bad-header").size() == 1) ||
                 !bridge_->running();
        },
        seconds(120));
    ReceiveFor(seconds(3));
    ASSERT_TRUE(bridge_->running()) << "the bridge stopped";

    ASSERT_EQ(copies("large").size(), 1u);
    EXPECT_EQ(copies("large")[0]->topic, target_topic_);
    EXPECT_EQ(copies("large")[0]->value.value_or("").size(),
              std::string("large|").size() + kLargeValueBytes);
    ASSERT_EQ(copies("fits-alt").size(), 1u);
    EXPECT_EQ(copies("fits-alt")[0]->topic, alt_topic_);

    for (const std::string name : {"refused-by-alt", "bad-header"}) {
      SCOPED_TRACE(name);
      ASSERT_EQ(copies(name).size(), 1u);
      const TestRecord& letter = *copies(name)[0];
      EXPECT_EQ(letter.topic, dlq_topic_);
      EXPECT_EQ(letter.value.value_or(""), "") << "the reduced dead letter has no value";
      EXPECT_EQ(letter.Header("trace-id"), std::nullopt);
      const std::string error = letter.Header("x-delay-error").value_or("");
      std::cout << name << ": x-delay-error: " << error << "\n";
      EXPECT_NE(error.find("dead letter: "), std::string::npos) << error;
      EXPECT_NE(error.find("value and headers dropped"), std::string::npos) << error;
      EXPECT_TRUE(letter.Header("x-delay-original-bytes").has_value());
      EXPECT_EQ(letter.Header("x-delay-source").value_or("").rfind(delay_topic_, 0), 0u);
    }
    const std::string refused = copies("refused-by-alt")[0]->Header("x-delay-error").value_or("");
    EXPECT_NE(refused.find("delivery: " + alt_topic_ + " refused"), std::string::npos) << refused;
    EXPECT_NE(refused.find("too large"), std::string::npos) << refused;
    const std::string bad = copies("bad-header")[0]->Header("x-delay-error").value_or("");
    EXPECT_EQ(bad.rfind("x-delay: ", 0), 0u) << bad;

    std::vector<TestRecord> deliveries;
    for (const TestRecord& r : received_) {
      if (r.topic != dlq_topic_ && !r.key.value_or("").starts_with("refusal-")) {
        deliveries.push_back(r);
      }
    }
    const DeliveryReport report = good.CheckDeliveries(deliveries, TargetPartitions());
    std::cout << "records around them: " << report.ToString() << "\n";
    EXPECT_EQ(report.missing(), 0u);
    EXPECT_EQ(report.duplicates, 0u);
    EXPECT_EQ(report.early, 0u);
    EXPECT_EQ(report.unknown, 0u);
  }
};

TEST_F(BridgeRefusedDeliveryTest, AtLeastOnce) { Run(""); }

// A refusal reported by the broker dooms the open transaction: it is aborted, and the record goes
// to its next form when it is produced again.
TEST_F(BridgeRefusedDeliveryTest, ExactlyOnce) { Run("delivery:\n  guarantee: exactly_once\n"); }

}  // namespace
}  // namespace delaybridge::testing
