// Deliverer against librdkafka's mock cluster: records handed over are produced no earlier
// than due (the time each asked for, whatever its position) and acknowledged back with their
// store and position; Release drops what is not yet due; dead letters are acknowledged with
// their source offset; a record refused for good moves to its dead letter, then to the reduced
// dead letter, then is dropped, never retried forever;
// Stop waits for what is in flight.
#include "plugin/deliverer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "plugin/dead_letter.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_consumer.h"

namespace delaybridge::plugin {
namespace {

using std::chrono::milliseconds;
using testing::TestCluster;
using testing::TestConsumer;
using testing::TestRecord;

constexpr char kTarget[] = "deliverer.target";
constexpr char kDeadLetters[] = "deliverer.dlq";
const TopicPartitionId kStoreA{"delayed", 0};
const TopicPartitionId kStoreB{"delayed", 1};

DelayedRecord Record(const std::string& topic, int64_t source_offset, int64_t deliver_at_ms) {
  DelayedRecord r;
  r.target_topic = topic;
  r.key = "key-" + std::to_string(source_offset);
  r.value = "value-" + std::to_string(source_offset);
  r.headers = {{"trace", "t" + std::to_string(source_offset)}};
  r.source_topic = "delayed";
  r.source_offset = source_offset;
  r.requested_deliver_at_ms = deliver_at_ms;
  return r;
}

DueRecord Due(const TopicPartitionId& store, RecordPosition position, const DelayedRecord& record) {
  return DueRecord{store, position, EncodedRecord::Encode(record)};
}

// The record of source offset `offset` loaded from store, due at at_ms, the ordinal-th of its
// millisecond.
DueRecord Loaded(const TopicPartitionId& store, int64_t at_ms, uint32_t ordinal, int offset) {
  return Due(store, RecordPosition{at_ms, ordinal}, Record(kTarget, offset, at_ms));
}

class DelivererTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Create();
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->CreateTopic(kTarget, 2).ok());
    ASSERT_TRUE(cluster_->CreateTopic(kDeadLetters, 1).ok());
    StartDeliverer({});
  }

  // (Re)starts the Deliverer with these producer properties besides bootstrap.servers.
  void StartDeliverer(std::map<std::string, std::string> kafka) {
    if (deliverer_) deliverer_->Stop(5000);
    kafka["bootstrap.servers"] = cluster_->bootstrap();
    Deliverer::Callbacks callbacks;
    callbacks.on_acks = [this] {
      std::lock_guard<std::mutex> lock(mu_);
      ++ack_signals_;
      if (take_acks_on_signal_) {
        // As promptly as an idle owner would (the bridge's loop posts TakeAcks to itself).
        ack_signal_times_.push_back(std::chrono::steady_clock::now());
        taken_on_signal_.Append(deliverer_->TakeAcks());
      }
      cv_.notify_all();
    };
    callbacks.on_fatal = [this](const Status& s) {
      std::lock_guard<std::mutex> lock(mu_);
      fatal_ = s.ToString();
    };
    Deliverer::Options options;
    options.kafka = std::move(kafka);
    options.dead_letter_topic = kDeadLetters;
    auto deliverer = Deliverer::Start(options, logger_, clock_, callbacks);
    ASSERT_TRUE(deliverer.ok()) << deliverer.status().ToString();
    deliverer_ = std::move(deliverer).value();
  }

  void TearDown() override {
    if (deliverer_) deliverer_->Stop(5000);
    EXPECT_EQ(fatal_, "");
  }

  // Takes acknowledgements until `delivered` deliveries, `dead_lettered` dead letters and
  // `cancels` answers to Cancel came back, or 10 s passed.
  AckBatch AwaitAcks(size_t delivered, size_t dead_lettered, size_t cancels = 0) {
    AckBatch all;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      AckBatch batch = deliverer_->TakeAcks();
      all.delivered.insert(all.delivered.end(), batch.delivered.begin(), batch.delivered.end());
      all.dead_lettered.insert(all.dead_lettered.end(), batch.dead_lettered.begin(),
                               batch.dead_lettered.end());
      all.cancels.insert(all.cancels.end(), batch.cancels.begin(), batch.cancels.end());
      if (all.delivered.size() >= delivered && all.dead_lettered.size() >= dead_lettered &&
          all.cancels.size() >= cancels) {
        break;
      }
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, milliseconds(50));
    }
    return all;
  }

  std::vector<TestRecord> Consume(const std::string& topic, int partitions, size_t count) {
    auto consumer = TestConsumer::Create(cluster_->bootstrap(), "deliverer-test-reader");
    EXPECT_TRUE(consumer.ok()) << consumer.status().ToString();
    if (!consumer.ok()) return {};
    const Status assigned = (*consumer)->AssignFromBeginning({{topic, partitions}});
    EXPECT_TRUE(assigned.ok()) << assigned.ToString();
    return (*consumer)->ConsumeUntil([count](const auto& got) { return got.size() >= count; },
                                     milliseconds(10000));
  }

  Logger logger_{LogLevel::kWarn};
  SystemClock clock_;
  std::unique_ptr<TestCluster> cluster_;
  std::unique_ptr<Deliverer> deliverer_;
  std::mutex mu_;
  std::condition_variable cv_;
  int ack_signals_ = 0;
  bool take_acks_on_signal_ = false;
  std::vector<std::chrono::steady_clock::time_point> ack_signal_times_;  // guarded by mu_
  AckBatch taken_on_signal_;                                             // guarded by mu_
  std::string fatal_;
};

TEST_F(DelivererTest, ProducesWhenDueAndAcknowledgesPositions) {
  const int64_t now_ms = clock_.now_ms();
  std::vector<DueRecord> due;
  for (int i = 0; i < 20; ++i) {
    const int64_t at_ms = now_ms + 100 + 20 * (i % 5);
    const TopicPartitionId& store = i % 2 ? kStoreB : kStoreA;
    due.push_back(
        Due(store, RecordPosition{at_ms, static_cast<uint32_t>(i)}, Record(kTarget, i, at_ms)));
  }
  deliverer_->Schedule(std::move(due));
  EXPECT_EQ(deliverer_->in_memory(), 20u);

  AckBatch acks = AwaitAcks(20, 0);
  ASSERT_EQ(acks.delivered.size(), 20u);
  for (const auto& [store, position] : acks.delivered) {
    EXPECT_EQ(store, position.ordinal % 2 ? kStoreB : kStoreA);
    EXPECT_EQ(position.deliver_at_ms, now_ms + 100 + 20 * (position.ordinal % 5));
  }
  EXPECT_EQ(deliverer_->in_memory(), 0u);

  const std::vector<TestRecord> out = Consume(kTarget, 2, 20);
  ASSERT_EQ(out.size(), 20u);
  for (const TestRecord& r : out) {
    const std::string source = r.Header("x-delay-source").value_or("?/?/-1");
    const int i = std::stoi(source.substr(source.rfind('/') + 1));  // "delayed/0/<offset>"
    EXPECT_EQ(r.key, "key-" + std::to_string(i));
    EXPECT_EQ(r.value, "value-" + std::to_string(i));
    EXPECT_EQ(r.Header("trace"), "t" + std::to_string(i));
    // The Kafka timestamp is the produce time: never before the record was due.
    EXPECT_GE(r.timestamp_ms, now_ms + 100 + 20 * (i % 5)) << "record " << i << " early";
  }

  const DeliveryStats stats = deliverer_->TakeStats();
  EXPECT_EQ(stats.delivered, 20u);
  EXPECT_EQ(stats.lateness_at_produce.count(), 20);
  EXPECT_EQ(stats.lateness_at_produce.early_count(), 0);
  EXPECT_EQ(stats.in_memory, 0u);
  EXPECT_EQ(deliverer_->TakeStats().delivered, 0u);  // per interval
}

// Reproduces a drain of 250,000 records due at once delivering at a tenth of the pipe's rate:
// with librdkafka's queue (queue.buffering.max.messages) full, every record of the due batch was
// tried and refused, and all of them tried again 10 ms later. The first refusal puts the rest
// of the batch back untried.
TEST_F(DelivererTest, AFullProducerQueueSendsTheRestOfTheDueBatchBackUntried) {
  StartDeliverer({{"queue.buffering.max.messages", "50"}});
  constexpr int kRecords = 2000;
  const int64_t at_ms = clock_.now_ms() + 100;
  std::vector<DueRecord> due;
  for (int i = 0; i < kRecords; ++i) due.push_back(Loaded(kStoreA, at_ms, i, i));
  deliverer_->Schedule(std::move(due));

  const AckBatch acks = AwaitAcks(kRecords, 0);
  EXPECT_EQ(acks.delivered.size(), static_cast<size_t>(kRecords));
  const DeliveryStats stats = deliverer_->TakeStats();
  EXPECT_EQ(stats.delivered, static_cast<uint64_t>(kRecords));
  // A turn of the timer sends what fits (about 50) and is refused once; trying the whole rest
  // of the batch, the first turn alone was refused 1,950 times.
  EXPECT_GT(stats.queue_full, 0u);
  EXPECT_LT(stats.queue_full, static_cast<uint64_t>(kRecords / 4)) << "records tried in vain";

  // Put back in their order: each partition has them in the order they fell due.
  const std::vector<TestRecord> out = Consume(kTarget, 2, kRecords);
  ASSERT_EQ(out.size(), static_cast<size_t>(kRecords));
  std::map<int32_t, int> last_of_partition;
  for (const TestRecord& r : out) {
    const std::string source = r.Header("x-delay-source").value_or("?/?/-1");
    const int i = std::stoi(source.substr(source.rfind('/') + 1));  // "delayed/0/<offset>"
    auto [last, first] = last_of_partition.emplace(r.partition, i);
    if (!first) {
      EXPECT_GT(i, last->second) << "partition " << r.partition;
      last->second = i;
    }
  }
}

// Reproduces the delivery thread waking the bridge's loop once per delivery report (4,400
// times a second at 25k records a second): the owner is told of acknowledgements at most every
// 10 ms, and told of every one.
TEST_F(DelivererTest, TheOwnerIsToldOfAcknowledgementsAtMostEveryTenMilliseconds) {
  // The producer's set-up (metadata, producer id) first, so the records are acknowledged as they
  // fall due rather than all at once when it is ready.
  const int64_t warm_up_ms = clock_.now_ms();
  deliverer_->Schedule(
      {Due(kStoreA, RecordPosition{warm_up_ms, 0}, Record(kTarget, 0, warm_up_ms))});
  ASSERT_EQ(AwaitAcks(1, 0).delivered.size(), 1u);
  {
    std::lock_guard<std::mutex> lock(mu_);
    take_acks_on_signal_ = true;
  }
  const int64_t now_ms = clock_.now_ms();
  constexpr int kRecords = 400;
  std::vector<DueRecord> due;
  for (int i = 0; i < kRecords; ++i) {
    const int64_t at_ms = now_ms + 50 + i / 2;  // two a millisecond for 200 ms
    due.push_back(Due(kStoreA, RecordPosition{at_ms, static_cast<uint32_t>(i)},
                      Record(kTarget, 1 + i, at_ms)));
  }
  deliverer_->Schedule(std::move(due));
  std::unique_lock<std::mutex> lock(mu_);
  ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10),
                           [&] { return taken_on_signal_.delivered.size() == kRecords; }))
      << taken_on_signal_.delivered.size() << " of " << kRecords << " acknowledgements signalled";
  ASSERT_GE(ack_signal_times_.size(), 2u);
  for (size_t i = 1; i < ack_signal_times_.size(); ++i) {
    // 10 ms apart where the Deliverer reads the clock; measured here a little later, and the
    // thread may be preempted in between. Without the bound they came two a millisecond.
    EXPECT_GE(ack_signal_times_[i] - ack_signal_times_[i - 1], milliseconds(5))
        << "signal " << i << " of " << ack_signal_times_.size();
  }
}

TEST_F(DelivererTest, ARecordPlacedLaterThanItAskedIsDeliveredWhenItAsked) {
  // A store places a record after its delivered watermark, which runs ahead of the clock once
  // the clock stepped back: the position orders it, the time it asked for says when it is due.
  const int64_t asked_ms = clock_.now_ms() + 200;
  const RecordPosition placed{clock_.now_ms() + 3'600'000, 7};
  std::vector<DueRecord> due;
  due.push_back(Due(kStoreA, placed, Record(kTarget, 1, asked_ms)));
  deliverer_->Schedule(std::move(due));

  AckBatch acks = AwaitAcks(1, 0);
  ASSERT_EQ(acks.delivered.size(), 1u) << "held until its position, an hour ahead";
  EXPECT_EQ(acks.delivered[0].second, placed);
  const std::vector<TestRecord> out = Consume(kTarget, 2, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_GE(out[0].timestamp_ms, asked_ms) << "early";
}

TEST_F(DelivererTest, ReleaseDropsTheStoresRecordsOnly) {
  const int64_t later_ms = clock_.now_ms() + 60'000;
  const int64_t soon_ms = clock_.now_ms() + 300;
  std::vector<DueRecord> due;
  for (int i = 0; i < 5; ++i) {
    due.push_back(Due(kStoreA, RecordPosition{later_ms, static_cast<uint32_t>(i)},
                      Record(kTarget, i, later_ms)));
  }
  due.push_back(Due(kStoreB, RecordPosition{soon_ms, 0}, Record(kTarget, 99, soon_ms)));
  deliverer_->Schedule(std::move(due));

  const Deliverer::ReleaseResult released = deliverer_->Release({kStoreA}, 5000);
  EXPECT_TRUE(released.flushed);
  EXPECT_EQ(released.released, 5u);
  EXPECT_EQ(deliverer_->in_memory(), 1u);

  AckBatch acks = AwaitAcks(1, 0);
  ASSERT_EQ(acks.delivered.size(), 1u);
  EXPECT_EQ(acks.delivered[0].first, kStoreB);
  EXPECT_EQ(deliverer_->in_memory(), 0u);
  const DeliveryStats stats = deliverer_->TakeStats();
  EXPECT_EQ(stats.in_wheel, 0u);  // the released records' timers were cancelled
}

// Records handed over while the delivery thread's due timer is armed, and due well after that
// wake-up, wait in its inbox without waking it. Anchor() arms the timer: a record of store B due
// at at_ms, and a command (TakeStats) that returns once the thread has taken it and promised to
// look again at at_ms.
void Anchor(Deliverer& deliverer, int64_t at_ms) {
  deliverer.Schedule({Due(kStoreB, RecordPosition{at_ms, 0}, Record(kTarget, 1000, at_ms))});
  (void)deliverer.TakeStats();
}

TEST_F(DelivererTest, RecordsThatWaitInTheInboxAreTakenAtTheTimersWakeUpAndNotEarly) {
  const int64_t anchor_ms = clock_.now_ms() + 1'000;  // well after the Schedule below
  Anchor(*deliverer_, anchor_ms);
  const int64_t later_ms = anchor_ms + 400;
  deliverer_->Schedule({Loaded(kStoreA, later_ms, 0, 1), Loaded(kStoreA, later_ms, 1, 2)});
  EXPECT_EQ(deliverer_->in_memory(), 3u);

  // Nothing but the timer's wake-up at the anchor takes them (AwaitAcks posts no command).
  AckBatch acks = AwaitAcks(3, 0);
  ASSERT_EQ(acks.delivered.size(), 3u);
  std::set<std::string> keys;
  for (const TestRecord& r : Consume(kTarget, 2, 3)) {
    keys.insert(*r.key);
    if (r.key != "key-1000") {
      EXPECT_GE(r.timestamp_ms, later_ms) << "early";
    }
  }
  EXPECT_EQ(keys, (std::set<std::string>{"key-1", "key-2", "key-1000"}));
}

TEST_F(DelivererTest, ARecordDueBeforeTheTimersNextWakeUpWakesTheThread) {
  Anchor(*deliverer_, clock_.now_ms() + 60'000);
  const int64_t soon_ms = clock_.now_ms() + 100;
  deliverer_->Schedule({Loaded(kStoreA, soon_ms, 0, 1)});
  AckBatch acks = AwaitAcks(1, 0);  // within 10 s, not at the anchor a minute on
  ASSERT_EQ(acks.delivered.size(), 1u);
  EXPECT_EQ(acks.delivered[0].first, kStoreA);
}

TEST_F(DelivererTest, CommandsFindTheRecordsThatWaitInTheInbox) {
  Anchor(*deliverer_, clock_.now_ms() + 30'000);
  const int64_t later_ms = clock_.now_ms() + 60'000;
  deliverer_->Schedule({Loaded(kStoreA, later_ms, 0, 1), Loaded(kStoreA, later_ms, 1, 2),
                        Loaded(kStoreB, later_ms, 1, 3)});
  deliverer_->Cancel(kStoreA, 2, false);
  AckBatch acks = AwaitAcks(0, 0, 1);
  ASSERT_EQ(acks.cancels.size(), 1u);
  EXPECT_EQ(acks.cancels[0].cancelled_at, (std::vector<RecordPosition>{{later_ms, 1}}));

  deliverer_->Schedule({Loaded(kStoreA, later_ms, 2, 4)});
  const Deliverer::ReleaseResult released = deliverer_->Release({kStoreA}, 5000);
  EXPECT_EQ(released.released, 2u);                 // offsets 1 and 4
  EXPECT_EQ(deliverer_->TakeStats().in_wheel, 2u);  // store B's: the anchor and offset 3
}

// Cancel drops a record waiting in the wheel and answers with its position; a record already
// delivered, or one it never held, is answered without one (too late).
TEST_F(DelivererTest, CancelDropsAWaitingRecordAndAnswersEveryCancel) {
  const int64_t soon_ms = clock_.now_ms() + 300;
  const int64_t later_ms = clock_.now_ms() + 600;
  deliverer_->Schedule({Loaded(kStoreA, soon_ms, 0, 1), Loaded(kStoreA, later_ms, 0, 2),
                        Loaded(kStoreA, later_ms, 1, 3), Loaded(kStoreB, later_ms, 0, 4),
                        // A record stored twice (after a crash): both copies go.
                        Loaded(kStoreA, later_ms, 2, 5), Loaded(kStoreA, later_ms, 3, 5)});
  deliverer_->Cancel(kStoreA, 5, false);
  deliverer_->Cancel(kStoreA, 2, false);
  deliverer_->Cancel(kStoreA, 77, true);  // never held
  deliverer_->Cancel(kStoreB, 3, false);  // another store's offset
  AckBatch acks = AwaitAcks(3, 0, 4);
  ASSERT_EQ(acks.cancels.size(), 4u);
  EXPECT_EQ(acks.cancels[0].target_offset, 5);
  EXPECT_EQ(acks.cancels[0].cancelled_at.size(), 2u);
  EXPECT_EQ(acks.cancels[1].store, kStoreA);
  EXPECT_EQ(acks.cancels[1].target_offset, 2);
  EXPECT_EQ(acks.cancels[1].cancelled_at, (std::vector<RecordPosition>{{later_ms, 0}}));
  EXPECT_TRUE(acks.cancels[2].cancelled_at.empty());
  EXPECT_TRUE(acks.cancels[2].counted);  // handed back as given
  EXPECT_TRUE(acks.cancels[3].cancelled_at.empty());
  EXPECT_FALSE(acks.cancels[3].counted);
  ASSERT_EQ(acks.delivered.size(), 3u);
  EXPECT_EQ(deliverer_->in_memory(), 0u);

  deliverer_->Cancel(kStoreA, 1, false);  // delivered: too late
  acks = AwaitAcks(0, 0, 1);
  ASSERT_EQ(acks.cancels.size(), 1u);
  EXPECT_TRUE(acks.cancels[0].cancelled_at.empty());

  std::set<std::string> keys;
  for (const TestRecord& r : Consume(kTarget, 2, 3)) keys.insert(*r.key);
  EXPECT_EQ(keys, (std::set<std::string>{"key-1", "key-3", "key-4"}));
  EXPECT_EQ(deliverer_->TakeStats().in_wheel, 0u);
}

// A store's records are indexed by source offset from its first cancel on: the records held
// before that cancel are found by it, and those handed over after it by the next ones; a record
// settled meanwhile is not.
TEST_F(DelivererTest, CancelsFindRecordsHandedOverBeforeAndAfterTheFirstCancelOfTheirStore) {
  const int64_t soon_ms = clock_.now_ms() + 300;
  const int64_t later_ms = clock_.now_ms() + 3000;
  deliverer_->Schedule({Loaded(kStoreA, soon_ms, 0, 1), Loaded(kStoreA, later_ms, 0, 2),
                        Loaded(kStoreB, later_ms, 0, 3)});
  deliverer_->Cancel(kStoreA, 2, false);
  deliverer_->Schedule({Loaded(kStoreA, later_ms, 1, 4), Loaded(kStoreA, later_ms, 2, 5)});
  deliverer_->Cancel(kStoreA, 5, false);
  deliverer_->Cancel(kStoreB, 3, false);  // kStoreB's first cancel: its index is made now
  AckBatch acks = AwaitAcks(1, 0, 3);
  ASSERT_EQ(acks.cancels.size(), 3u);
  EXPECT_EQ(acks.cancels[0].cancelled_at, (std::vector<RecordPosition>{{later_ms, 0}}));
  EXPECT_EQ(acks.cancels[1].cancelled_at, (std::vector<RecordPosition>{{later_ms, 2}}));
  EXPECT_EQ(acks.cancels[2].store, kStoreB);
  EXPECT_EQ(acks.cancels[2].cancelled_at, (std::vector<RecordPosition>{{later_ms, 0}}));

  // Record 1 was delivered after kStoreA's index was made: it left the index with it.
  ASSERT_EQ(acks.delivered.size(), 1u);
  deliverer_->Cancel(kStoreA, 1, false);
  acks = AwaitAcks(1, 0, 1);
  ASSERT_EQ(acks.cancels.size(), 1u);
  EXPECT_TRUE(acks.cancels[0].cancelled_at.empty());
  ASSERT_EQ(acks.delivered.size(), 1u);  // record 4

  std::set<std::string> keys;
  for (const TestRecord& r : Consume(kTarget, 2, 2)) keys.insert(*r.key);
  EXPECT_EQ(keys, (std::set<std::string>{"key-1", "key-4"}));
  EXPECT_EQ(deliverer_->TakeStats().in_wheel, 0u);
}

// A revocation waits for the released partitions' records only: deliveries of the others, even
// stuck ones, neither hold it up nor stop.
TEST_F(DelivererTest, ReleaseWaitsOnlyForTheReleasedStoresRecords) {
  constexpr char kStuck[] = "deliverer.stuck";
  ASSERT_TRUE(cluster_->CreateTopic(kStuck, 1).ok());
  ASSERT_TRUE(cluster_->SetPartitionLed(kStuck, 0, false).ok());
  const int64_t now_ms = clock_.now_ms();
  std::vector<DueRecord> due;
  due.push_back(Due(kStoreB, RecordPosition{now_ms, 0}, Record(kStuck, 50, now_ms)));
  for (int i = 0; i < 10; ++i) {
    due.push_back(
        Due(kStoreA, RecordPosition{now_ms, static_cast<uint32_t>(i)}, Record(kTarget, i, now_ms)));
  }
  deliverer_->Schedule(std::move(due));
  AckBatch acks = AwaitAcks(10, 0);
  EXPECT_EQ(acks.delivered.size(), 10u);

  const Deliverer::ReleaseResult released = deliverer_->Release({kStoreA}, 5000);
  EXPECT_TRUE(released.flushed) << "waited for another store's stuck record";
  EXPECT_EQ(released.released, 0u);
  EXPECT_EQ(deliverer_->in_memory(), 1u);  // store B's record still waits for its leader

  ASSERT_TRUE(cluster_->SetPartitionLed(kStuck, 0, true).ok());
  acks = AwaitAcks(1, 0);
  ASSERT_EQ(acks.delivered.size(), 1u);
  EXPECT_EQ(acks.delivered[0].first, kStoreB);
}

TEST_F(DelivererTest, DeadLettersAreAcknowledgedWithTheirSourceOffset) {
  DelayedRecord letter = Record(kDeadLetters, 7, 0);
  deliverer_->ProduceNow(kStoreB, EncodedRecord::Encode(letter), DeliveryForm::kDeadLetter);
  AckBatch acks = AwaitAcks(0, 1);
  ASSERT_EQ(acks.dead_lettered.size(), 1u);
  EXPECT_EQ(acks.dead_lettered[0].store, kStoreB);
  EXPECT_EQ(acks.dead_lettered[0].source_offset, 7);
  EXPECT_EQ(Consume(kDeadLetters, 1, 1).size(), 1u);
}

// librdkafka refuses a record over message.max.bytes before it leaves, as a broker refuses one
// over max.message.bytes after: both are permanent, and both take the same path.
TEST_F(DelivererTest, ARecordItsTargetRefusesGoesToTheDeadLetterTopicReducedIfNeeded) {
  StartDeliverer({{"message.max.bytes", "4000"}});
  const int64_t now_ms = clock_.now_ms();
  DelayedRecord small = Record(kTarget, 1, now_ms);
  DelayedRecord large = Record(kTarget, 2, now_ms);
  large.value = std::string(5000, 'v');
  std::vector<DueRecord> due;
  due.push_back(Due(kStoreA, RecordPosition{now_ms, 0}, small));
  due.push_back(Due(kStoreA, RecordPosition{now_ms, 1}, large));
  deliverer_->Schedule(std::move(due));

  // Both settle by position: the refused one is finished once its dead letter is acknowledged.
  AckBatch acks = AwaitAcks(2, 0);
  ASSERT_EQ(acks.delivered.size(), 2u);
  EXPECT_EQ(deliverer_->in_memory(), 0u);
  EXPECT_EQ(Consume(kTarget, 2, 1).size(), 1u);
  const std::vector<TestRecord> letters = Consume(kDeadLetters, 1, 1);
  ASSERT_EQ(letters.size(), 1u);
  const TestRecord& letter = letters[0];
  EXPECT_EQ(letter.key, "key-2");
  EXPECT_EQ(letter.value, std::nullopt);
  EXPECT_EQ(letter.Header("trace"), std::nullopt);
  EXPECT_EQ(letter.Header("x-delay-source"), "delayed/0/2");
  const std::string error = letter.Header("x-delay-error").value_or("");
  EXPECT_NE(error.find("delivery: deliverer.target refused delayed/0/2: Broker: Message size too "
                       "large; dead letter: Broker: Message size too large; value and headers "
                       "dropped"),
            std::string::npos)
      << error;
  EXPECT_EQ(letter.Header("x-delay-original-bytes"), "5012");  // key, value, "trace" header

  const DeliveryStats stats = deliverer_->TakeStats();
  EXPECT_EQ(stats.delivered, 1u);
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_EQ(stats.reduced, 1u);
  EXPECT_EQ(stats.dropped, 0u);
}

TEST_F(DelivererTest, ADeadLetterThatFitsNowhereIsDroppedNotRetriedForever) {
  StartDeliverer({{"message.max.bytes", "1000"}});  // librdkafka's smallest
  DelayedRecord letter = Record(kDeadLetters, 7, 0);
  letter.key = std::string(kReducedKeyMaxBytes, 'k');  // kept in the reduced letter: too large
  letter.value = std::string(2000, 'v');
  deliverer_->ProduceNow(kStoreB, EncodedRecord::Encode(letter), DeliveryForm::kDeadLetter);

  AckBatch acks = AwaitAcks(0, 1);
  ASSERT_EQ(acks.dead_lettered.size(), 1u);
  EXPECT_EQ(acks.dead_lettered[0].source_offset, 7);
  EXPECT_EQ(deliverer_->in_memory(), 0u);
  const DeliveryStats stats = deliverer_->TakeStats();
  EXPECT_EQ(stats.reduced, 1u);
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.in_wheel, 0u);  // nothing left to retry
}

TEST_F(DelivererTest, StopWaitsForWhatIsInFlightAndIsIdempotent) {
  const int64_t now_ms = clock_.now_ms();
  std::vector<DueRecord> due;
  for (int i = 0; i < 50; ++i) {
    due.push_back(
        Due(kStoreA, RecordPosition{now_ms, static_cast<uint32_t>(i)}, Record(kTarget, i, now_ms)));
  }
  deliverer_->Schedule(std::move(due));
  AwaitAcks(1, 0);  // the first ones are out
  deliverer_->Stop(5000);
  deliverer_->Stop(5000);
  EXPECT_EQ(Consume(kTarget, 2, 50).size(), 50u);
  EXPECT_EQ(deliverer_->TakeStats().in_flight, 0);  // runs inline once stopped
}

}  // namespace
}  // namespace delaybridge::plugin
