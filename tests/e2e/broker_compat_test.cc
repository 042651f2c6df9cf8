// Checks that this machine's librdkafka works against the pinned Apache Kafka broker for every
// protocol feature DelayBridge relies on: idempotent acks=all produce, consumer groups with
// manual offset commits, and transactions (init, begin, send offsets, commit, abort).
#include <gtest/gtest.h>

#include <set>

#include "tests/support/test_cluster.h"
#include "tests/support/test_consumer.h"
#include "tests/support/test_producer.h"
#include "tests/support/topic_admin.h"

namespace delaybridge::testing {
namespace {

using std::chrono::seconds;

class BrokerCompatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> bootstrap = RealBrokerBootstrap();
    ASSERT_TRUE(bootstrap.ok()) << bootstrap.status().ToString();
    bootstrap_ = *bootstrap;
  }

  std::unique_ptr<TestProducer> MakeProducer(const std::map<std::string, std::string>& extra = {}) {
    auto producer = TestProducer::Create(bootstrap_, extra);
    EXPECT_TRUE(producer.ok()) << producer.status().ToString();
    return producer.ok() ? std::move(producer).value() : nullptr;
  }

  std::unique_ptr<TestConsumer> MakeConsumer(const std::string& group,
                                             const std::map<std::string, std::string>& extra = {}) {
    auto consumer = TestConsumer::Create(bootstrap_, group, extra);
    EXPECT_TRUE(consumer.ok()) << consumer.status().ToString();
    return consumer.ok() ? std::move(consumer).value() : nullptr;
  }

  std::string bootstrap_;
};

// "<prefix><n>". Appended rather than `"v" + std::to_string(n)`: GCC 12 at -O3 reports a false
// -Wrestrict on a one-character literal + std::string.
std::string Numbered(const char* prefix, int n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

auto HasAtLeast(size_t n) {
  return [n](const std::vector<TestRecord>& records) { return records.size() >= n; };
}

TEST_F(BrokerCompatTest, IdempotentProduceGroupConsumeAndCommit) {
  const std::string topic = UniqueName("compat-plain");
  ASSERT_TRUE(CreateTopics(bootstrap_, {{topic, 3}}).ok());

  auto producer = MakeProducer();
  ASSERT_NE(producer, nullptr);
  constexpr int kRecords = 1000;
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_TRUE(producer
                    ->Produce({.topic = topic,
                               .key = "key-" + std::to_string(i % 37),
                               .value = "value-" + std::to_string(i),
                               .headers = {{"h", Numbered("v", i)}, {"null", std::nullopt}}})
                    .ok());
  }
  const Status flushed = producer->Flush(std::chrono::seconds(30));
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();

  const std::string group = UniqueName("compat-group");
  {
    auto consumer = MakeConsumer(group);
    ASSERT_NE(consumer, nullptr);
    ASSERT_TRUE(consumer->Subscribe({topic}).ok());
    std::vector<TestRecord> records = consumer->ConsumeUntil(HasAtLeast(kRecords), seconds(60));
    ASSERT_EQ(records.size(), static_cast<size_t>(kRecords));
    std::set<std::string> values;
    for (const TestRecord& record : records) {
      values.insert(record.value.value_or(""));
      const std::string value = record.value.value_or("");
      const std::string suffix = value.substr(value.find('-') + 1);
      EXPECT_EQ(record.Header("h"), "v" + suffix);
      ASSERT_EQ(record.headers.size(), 2u);
      EXPECT_FALSE(record.headers[1].value.has_value()) << "null header value must stay null";
    }
    EXPECT_EQ(values.size(), static_cast<size_t>(kRecords));
    const Status committed = consumer->CommitSync();
    ASSERT_TRUE(committed.ok()) << committed.ToString();
  }

  // A new member of the same group resumes at the committed offsets: nothing left to read.
  auto consumer = MakeConsumer(group);
  ASSERT_NE(consumer, nullptr);
  std::vector<RdKafka::TopicPartition*> partitions;
  for (int p = 0; p < 3; ++p) partitions.push_back(RdKafka::TopicPartition::create(topic, p));
  ASSERT_EQ(consumer->raw().committed(partitions, 10000), RdKafka::ERR_NO_ERROR);
  int64_t committed_total = 0;
  for (RdKafka::TopicPartition* partition : partitions) committed_total += partition->offset();
  RdKafka::TopicPartition::destroy(partitions);
  EXPECT_EQ(committed_total, kRecords);
  ASSERT_TRUE(consumer->Subscribe({topic}).ok());
  EXPECT_TRUE(consumer->ConsumeFor(seconds(3)).empty());
}

TEST_F(BrokerCompatTest, TransactionsCommitAbortAndSendOffsets) {
  const std::string input = UniqueName("compat-txn-in");
  const std::string output = UniqueName("compat-txn-out");
  ASSERT_TRUE(CreateTopics(bootstrap_, {{input, 2}, {output, 2}}).ok());

  auto plain = MakeProducer();
  ASSERT_NE(plain, nullptr);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(plain->Produce({.topic = input, .value = "in-" + std::to_string(i)}).ok());
  }
  ASSERT_TRUE(plain->Flush(seconds(30)).ok());

  // Consume-transform-produce, the way exactly-once delivery will use it.
  const std::string group = UniqueName("compat-txn-group");
  auto consumer = MakeConsumer(group);
  ASSERT_NE(consumer, nullptr);
  ASSERT_TRUE(consumer->Subscribe({input}).ok());
  std::vector<TestRecord> inputs = consumer->ConsumeUntil(HasAtLeast(10), seconds(60));
  ASSERT_EQ(inputs.size(), 10u);

  auto txn = MakeProducer({{"transactional.id", UniqueName("compat-txn")}});
  ASSERT_NE(txn, nullptr);
  RdKafka::Producer& producer = txn->raw();
  std::unique_ptr<RdKafka::Error> error(producer.init_transactions(30000));
  ASSERT_EQ(error, nullptr) << error->str();

  error.reset(producer.begin_transaction());
  ASSERT_EQ(error, nullptr) << error->str();
  for (const TestRecord& record : inputs) {
    ASSERT_TRUE(
        txn->Produce({.topic = output, .value = "committed-" + record.value.value_or("")}).ok());
  }
  std::vector<RdKafka::TopicPartition*> offsets;
  std::map<int32_t, int64_t> next_offset;
  for (const TestRecord& record : inputs) {
    next_offset[record.partition] = std::max(next_offset[record.partition], record.offset + 1);
  }
  for (const auto& [partition, offset] : next_offset) {
    offsets.push_back(RdKafka::TopicPartition::create(input, partition, offset));
  }
  std::unique_ptr<RdKafka::ConsumerGroupMetadata> group_metadata(consumer->raw().groupMetadata());
  error.reset(producer.send_offsets_to_transaction(offsets, group_metadata.get(), 30000));
  RdKafka::TopicPartition::destroy(offsets);
  ASSERT_EQ(error, nullptr) << error->str();
  error.reset(producer.commit_transaction(30000));
  ASSERT_EQ(error, nullptr) << error->str();

  error.reset(producer.begin_transaction());
  ASSERT_EQ(error, nullptr) << error->str();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(txn->Produce({.topic = output, .value = "aborted-" + std::to_string(i)}).ok());
  }
  ASSERT_EQ(producer.flush(30000), RdKafka::ERR_NO_ERROR);
  error.reset(producer.abort_transaction(30000));
  ASSERT_EQ(error, nullptr) << error->str();

  // read_committed sees the committed batch only; the offsets went in with it.
  auto reader =
      MakeConsumer(UniqueName("compat-txn-reader"), {{"isolation.level", "read_committed"}});
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Subscribe({output}).ok());
  std::vector<TestRecord> outputs = reader->ConsumeUntil(HasAtLeast(10), seconds(60));
  std::vector<TestRecord> extra = reader->ConsumeFor(seconds(3));
  outputs.insert(outputs.end(), extra.begin(), extra.end());
  ASSERT_EQ(outputs.size(), 10u);
  for (const TestRecord& record : outputs) {
    EXPECT_TRUE(record.value.value_or("").starts_with("committed-")) << record.value.value_or("");
  }

  std::vector<RdKafka::TopicPartition*> committed;
  for (int p = 0; p < 2; ++p) committed.push_back(RdKafka::TopicPartition::create(input, p));
  ASSERT_EQ(consumer->raw().committed(committed, 10000), RdKafka::ERR_NO_ERROR);
  int64_t committed_total = 0;
  for (RdKafka::TopicPartition* partition : committed) {
    committed_total += std::max<int64_t>(partition->offset(), 0);
  }
  RdKafka::TopicPartition::destroy(committed);
  EXPECT_EQ(committed_total, 10);
}

}  // namespace
}  // namespace delaybridge::testing
