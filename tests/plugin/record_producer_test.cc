// RecordProducer against librdkafka's mock cluster: a record arrives as it was (null and empty
// keys, values and header values kept apart, headers in order, x-delay-source added); a target
// name librdkafka refuses is an error, not a crash; the delivery reports a call serves reach the
// handler together once the call returns, in the order they were served, and a handler that
// calls the producer again gets that call's reports as a batch of their own, none lost.
#include "plugin/record_producer.h"

#include <gtest/gtest.h>

#include <vector>

#include "plugin/encoded_record.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_consumer.h"

namespace delaybridge::plugin {
namespace {

using testing::TestCluster;
using testing::TestConsumer;
using testing::TestHeader;
using testing::TestRecord;

constexpr char kTarget[] = "producer.target";

DelayedRecord Record(int64_t source_offset) {
  DelayedRecord r;
  r.target_topic = kTarget;
  r.value = "value-" + std::to_string(source_offset);
  r.source_topic = "delayed";
  r.source_offset = source_offset;
  return r;
}

class RecordProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Create();
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    // One partition: librdkafka reports a partition's records in the order they were produced.
    ASSERT_TRUE(cluster_->CreateTopic(kTarget, 1).ok());
  }

  std::unique_ptr<RecordProducer> Create(RecordProducer::AckHandler on_acks) {
    auto producer = RecordProducer::Create({{"bootstrap.servers", cluster_->bootstrap()}}, logger_,
                                           std::move(on_acks));
    EXPECT_TRUE(producer.ok()) << producer.status().ToString();
    return producer.ok() ? std::move(producer).value() : nullptr;
  }

  void Produce(RecordProducer& producer, uint64_t token) {
    const EncodedRecord record = EncodedRecord::Encode(Record(static_cast<int64_t>(token)));
    ASSERT_EQ(producer.Produce(record.view(), 1'000, token), RdKafka::ERR_NO_ERROR);
  }

  std::unique_ptr<TestCluster> cluster_;
  Logger logger_{LogLevel::kWarn};
};

TEST_F(RecordProducerTest, ARecordArrivesAsItWasWithItsSource) {
  std::vector<ProducerAck> acks;
  auto producer = Create([&](std::span<const ProducerAck> served) {
    acks.insert(acks.end(), served.begin(), served.end());
  });
  ASSERT_NE(producer, nullptr);
  std::vector<DelayedRecord> records(3, Record(0));
  records[0].key = "k";
  records[0].value = std::nullopt;  // a tombstone
  records[0].headers = {{"a", "1"}, {"null", std::nullopt}, {"empty", ""}, {"a", "2"}};
  records[1].key = std::nullopt;
  records[1].value = "";
  records[1].headers = {};
  records[2].key = "";
  records[2].value = std::string("\0binary\xff", 8);
  records[2].headers = {{"", "nameless"}};
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].source_partition = 7;
    records[i].source_offset = static_cast<int64_t>(40 + i);
    const EncodedRecord encoded = EncodedRecord::Encode(records[i]);
    ASSERT_EQ(producer->Produce(encoded.view(), 1'000 + static_cast<int64_t>(i), i + 1),
              RdKafka::ERR_NO_ERROR);
  }
  ASSERT_EQ(producer->Flush(10'000), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(acks.size(), 3u);
  for (const ProducerAck& ack : acks) EXPECT_EQ(ack.err, RdKafka::ERR_NO_ERROR);

  auto consumer = TestConsumer::Create(cluster_->bootstrap(), "record-producer-test");
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ASSERT_TRUE((*consumer)->AssignFromBeginning({{kTarget, 1}}).ok());
  const std::vector<TestRecord> out = (*consumer)->ConsumeUntil(
      [](const auto& got) { return got.size() >= 3; }, std::chrono::milliseconds(10'000));
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(out[i].key, records[i].key);
    EXPECT_EQ(out[i].value, records[i].value);
    EXPECT_EQ(out[i].timestamp_ms, 1'000 + static_cast<int64_t>(i));
    std::vector<TestHeader> expected;
    for (const auto& header : records[i].headers) expected.push_back({header.name, header.value});
    expected.push_back({"x-delay-source", "delayed/7/" + std::to_string(40 + i)});
    EXPECT_EQ(out[i].headers, expected);
  }
}

TEST_F(RecordProducerTest, ATargetNameLibrdkafkaRefusesIsAnError) {
  auto producer = Create([](std::span<const ProducerAck>) {});
  ASSERT_NE(producer, nullptr);
  DelayedRecord record = Record(1);
  record.target_topic = std::string(600, 't');  // librdkafka takes names of up to 512 bytes
  const EncodedRecord encoded = EncodedRecord::Encode(record);
  EXPECT_NE(producer->Produce(encoded.view(), 1'000, 1), RdKafka::ERR_NO_ERROR);
  // The producer goes on with valid targets.
  Produce(*producer, 2);
  EXPECT_EQ(producer->Flush(10'000), RdKafka::ERR_NO_ERROR);
}

TEST_F(RecordProducerTest, ReportsOfOneCallComeTogetherInTheOrderServed) {
  std::vector<std::vector<uint64_t>> batches;
  auto producer = Create([&](std::span<const ProducerAck> acks) {
    batches.emplace_back();
    for (const ProducerAck& ack : acks) {
      EXPECT_EQ(ack.err, RdKafka::ERR_NO_ERROR);
      batches.back().push_back(ack.token);
    }
  });
  ASSERT_NE(producer, nullptr);
  std::vector<uint64_t> tokens;
  for (uint64_t token = 1; token <= 50; ++token) {
    Produce(*producer, token);
    tokens.push_back(token);
  }
  ASSERT_EQ(producer->Flush(10'000), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], tokens);
  // Nothing was left to serve, so the handler is not called with an empty batch.
  producer->Poll();
  EXPECT_EQ(batches.size(), 1u);
}

TEST_F(RecordProducerTest, AHandlerThatFlushesAgainGetsThoseReportsAsABatchOfTheirOwn) {
  std::vector<std::vector<uint64_t>> batches;
  RecordProducer* self = nullptr;
  auto producer = Create([&](std::span<const ProducerAck> acks) {
    batches.emplace_back();
    for (const ProducerAck& ack : acks) batches.back().push_back(ack.token);
    if (batches.size() == 1) {
      Produce(*self, 100);
      ASSERT_EQ(self->Flush(10'000), RdKafka::ERR_NO_ERROR);
    }
  });
  ASSERT_NE(producer, nullptr);
  self = producer.get();
  for (uint64_t token = 1; token <= 3; ++token) Produce(*producer, token);
  ASSERT_EQ(producer->Flush(10'000), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<uint64_t>{100}));
  // Both buffers were handed back intact: a later call still reports.
  Produce(*producer, 200);
  ASSERT_EQ(producer->Flush(10'000), RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2], (std::vector<uint64_t>{200}));
}

}  // namespace
}  // namespace delaybridge::plugin
