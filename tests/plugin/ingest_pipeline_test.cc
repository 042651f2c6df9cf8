// IngestPipeline on a real PartitionStore in a temporary directory, with a fake of the delivery
// thread that records what it is handed: a record inside the preloaded horizon is handed over
// once it is stored, each record of a batch mixing partitions reaches its own partition's store,
// bad input is dead-lettered, records read again are skipped, a cancel of a record in the same
// batch hands the rest of the batch over before the cancel, and records a full disk cannot take
// wait, in order, until it can.
#include "plugin/ingest_pipeline.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/recording_fakes.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/small_filesystem.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

const std::set<std::string> kAllowedTargets;

IncomingRecord Consumed(int64_t offset, std::vector<KafkaHeader> headers, std::string value = "v") {
  IncomingRecord in;
  in.topic = kStoredPartition.topic;
  in.partition = kStoredPartition.partition;
  in.offset = offset;
  in.timestamp_ms = kHourStartMs;
  in.key = "k" + std::to_string(offset);
  in.value = std::move(value);
  in.headers = std::move(headers);
  return in;
}

IncomingRecord DueIn(int64_t offset, int64_t delay_ms, std::string value = "v") {
  return Consumed(offset, {{"x-delay", std::to_string(delay_ms)}}, std::move(value));
}

IncomingRecord CancelOf(int64_t offset, int64_t target_offset) {
  return Consumed(offset, {{"x-delay-cancel", kStoredPartition.topic + "/" +
                                                  std::to_string(kStoredPartition.partition) + "/" +
                                                  std::to_string(target_offset)}});
}

std::vector<IncomingRecord> Batch(std::initializer_list<IncomingRecord> records) {
  return std::vector<IncomingRecord>(records);
}

class IngestPipelineTest : public ::testing::Test {
 protected:
  // storage_dir: where the store lives (the test's own directory by default).
  void OpenStore(const std::string& storage_dir) {
    auto store = PartitionStore::Open(kStoredPartition, storage_dir, storage::StoreOptions{},
                                      kHourStartMs, {}, nullptr);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = store->get();
    stores_[kStoredPartition] = std::move(store).value();
    ASSERT_EQ(store_->Resume(100, std::nullopt), 100);
    store_->set_preloaded_until_second(kHourStartMs / 1000 + 5);
  }
  void SetUp() override { OpenStore(dir_.path()); }

  // more_routes: delay topics besides kStoredPartition's, with their default targets.
  IngestPipeline MakePipeline(const std::map<std::string, std::string>& more_routes = {}) {
    IngestPipeline::Settings settings;
    settings.routes = more_routes;
    settings.routes[kStoredPartition.topic] = "delivered";
    settings.policy.delay.max_delay_ms = 3'600'000;
    settings.policy.delay.allowed_targets = &kAllowedTargets;
    settings.policy.max_record_bytes = 64 * 1024;
    settings.dead_letter_topic = "dead-letters";
    IngestPipeline::Hooks hooks;
    hooks.held_changed = [this] { calls_.push_back("held changed"); };
    hooks.fail = [this](const Status& s) { failed_ = s; };
    return IngestPipeline(io_, std::move(settings), stores_, handover_, std::move(hooks),
                          log_.logger(), warnings_, clock_);
  }

  testing::TempDir dir_{"ingest_pipeline_test"};
  ManualClock clock_{kHourStartMs};
  LogCapture log_{"ingest_pipeline_test_log"};
  WarningThrottle warnings_{log_.logger(), clock_};
  boost::asio::io_context io_;
  CallLog calls_;
  FakeHandover handover_{calls_};
  PartitionStores stores_;
  PartitionStore* store_ = nullptr;
  Status failed_;
};

TEST_F(IngestPipelineTest, StoresEveryRecordAndHandsOverThoseInsideThePreloadedHorizon) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(Batch({DueIn(100, 2'000), DueIn(101, 60'000), DueIn(102, 0)}));
  EXPECT_EQ(calls_, CallLog({"schedule 100 102"}));
  EXPECT_EQ(pipeline.counts().stored, 3u);
  EXPECT_EQ(store_->offsets().last_added(), 102);
  ASSERT_EQ(handover_.scheduled.size(), 2u);
  EXPECT_EQ(handover_.scheduled[0].store, kStoredPartition);
  EXPECT_EQ(handover_.scheduled[0].record.requested_deliver_at_ms(), kHourStartMs + 2'000);
  EXPECT_TRUE(failed_.ok());
}

TEST_F(IngestPipelineTest, BadInputIsDeadLetteredAndTheRecordsAroundItAreStored) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(
      Batch({DueIn(100, 1'000), Consumed(101, {{"x-delay", "soon"}}), DueIn(102, 1'000)}));
  EXPECT_EQ(calls_, CallLog({"dead letter 101", "schedule 100 102"}));
  ASSERT_EQ(handover_.produced_now.size(), 1u);
  EXPECT_EQ(handover_.produced_now[0].record.target_topic, "dead-letters");
  EXPECT_EQ(handover_.produced_now[0].store, kStoredPartition);
  EXPECT_EQ(pipeline.counts().dead_lettered, 1u);
  EXPECT_EQ(pipeline.counts().stored, 2u);
}

TEST_F(IngestPipelineTest, RecordsReturnedAgainInThisRunAreSkipped) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(Batch({DueIn(100, 1'000), DueIn(101, 1'000)}));
  // librdkafka resumes a paused partition from the last stored offset.
  pipeline.Take(Batch({DueIn(101, 1'000), DueIn(102, 1'000)}));
  EXPECT_EQ(calls_, CallLog({"schedule 100 101", "schedule 102"}));
  EXPECT_EQ(pipeline.counts().refetched, 1u);
  EXPECT_EQ(pipeline.counts().stored, 3u);
}

TEST_F(IngestPipelineTest, RecordsOfAPartitionNotAssignedAreIgnored) {
  IngestPipeline pipeline = MakePipeline();
  IncomingRecord other = DueIn(100, 1'000);
  other.partition = 7;
  pipeline.Take(Batch({other}));
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(pipeline.counts().stored, 0u);
}

// Records of several partitions, one of another delay topic with the same partition number,
// and of one not assigned, in one batch: each goes to its own partition's store, with its own
// topic's default target.
TEST_F(IngestPipelineTest, ABatchMixingPartitionsPutsEveryRecordInItsOwnPartitionsStore) {
  const TopicPartitionId second{kStoredPartition.topic, kStoredPartition.partition + 1};
  const TopicPartitionId other_topic{"other.delay", kStoredPartition.partition};
  std::map<TopicPartitionId, PartitionStore*> opened_stores;
  for (const TopicPartitionId& id : {second, other_topic}) {
    auto opened =
        PartitionStore::Open(id, dir_.path(), storage::StoreOptions{}, kHourStartMs, {}, nullptr);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    opened_stores[id] = opened->get();
    stores_[id] = std::move(opened).value();
    ASSERT_EQ(opened_stores[id]->Resume(100, std::nullopt), 100);
    opened_stores[id]->set_preloaded_until_second(kHourStartMs / 1000 + 5);
  }
  auto on = [](const TopicPartitionId& id, IncomingRecord record) {
    record.topic = id.topic;
    record.partition = id.partition;
    return record;
  };
  const TopicPartitionId unassigned{kStoredPartition.topic, 7};
  IngestPipeline pipeline = MakePipeline({{other_topic.topic, "other.target"}});
  pipeline.Take(
      Batch({DueIn(100, 1'000), on(second, DueIn(100, 1'000)), on(unassigned, DueIn(100, 1'000)),
             on(other_topic, DueIn(100, 1'000)), DueIn(101, 1'000),
             on(other_topic, DueIn(101, 1'000)), on(second, DueIn(101, 1'000))}));
  EXPECT_EQ(pipeline.counts().stored, 6u);
  EXPECT_EQ(store_->offsets().last_added(), 101);
  EXPECT_EQ(opened_stores[second]->offsets().last_added(), 101);
  EXPECT_EQ(opened_stores[other_topic]->offsets().last_added(), 101);
  const std::vector<std::pair<TopicPartitionId, std::string>> expected = {
      {kStoredPartition, "delivered"}, {second, "delivered"},         {other_topic, "other.target"},
      {kStoredPartition, "delivered"}, {other_topic, "other.target"}, {second, "delivered"}};
  ASSERT_EQ(handover_.scheduled.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(handover_.scheduled[i].store, expected[i].first) << i;
    EXPECT_EQ(handover_.scheduled[i].record.target_topic(), expected[i].second) << i;
  }
}

TEST_F(IngestPipelineTest, ACancelOfARecordInItsOwnBatchHandsTheRestOverFirst) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(Batch({DueIn(100, 2'000), DueIn(101, 2'000), CancelOf(102, 100)}));
  // 100 never reaches the delivery thread; the cancel still goes after 101, in case a copy
  // of 100 stored before a crash is loaded there.
  EXPECT_EQ(calls_,
            CallLog({"schedule 101", "cancel " + kStoredPartition.ToString() + "/100, counted"}));
  EXPECT_EQ(pipeline.counts().cancelled, 1u);
}

TEST_F(IngestPipelineTest, ACancelNamingNoRecordIsCountedAsUnknown) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(Batch({DueIn(100, 2'000), CancelOf(101, 50)}));
  EXPECT_EQ(calls_, CallLog({"schedule 100"}));
  EXPECT_EQ(pipeline.counts().cancel_unknown, 1u);
  EXPECT_EQ(pipeline.counts().cancelled, 0u);
}

TEST_F(IngestPipelineTest, TheDeliveryThreadsCancelAnswersAreCounted) {
  IngestPipeline pipeline = MakePipeline();
  pipeline.Take(Batch({DueIn(100, 2'000)}));
  AckBatch::CancelAnswer dropped{kStoredPartition, 100, {handover_.scheduled[0].position}, false};
  AckBatch::CancelAnswer too_late{kStoredPartition, 101, {}, false};
  AckBatch::CancelAnswer revoked{TopicPartitionId{"delayed", 9}, 5, {}, false};
  pipeline.ApplyCancelAnswers({dropped, too_late, revoked});
  EXPECT_EQ(pipeline.counts().cancelled, 1u);
  EXPECT_EQ(pipeline.counts().cancel_too_late, 1u);
  // The dropped record is finished: the store's delivered watermark may pass it.
  EXPECT_FALSE(store_->tracker().oldest_outstanding().has_value());
}

// The store on a small filesystem filled up: offset 100 is stored (its hour's files exist),
// then records of 1 KB go into the write buffer until it must be written and the disk refuses.
class IngestPipelineFullDiskTest : public IngestPipelineTest {
 protected:
  void SetUp() override {
    if (!disk_.mounted()) GTEST_SKIP() << disk_.error();
    OpenStore(disk_.path());
  }
  // Takes records from offset 100 on until one is refused; returns its offset.
  int64_t TakeUntilRefused(IngestPipeline& pipeline) {
    pipeline.Take(Batch({DueIn(100, 1'000, value_)}));
    EXPECT_TRUE(disk_.Fill());
    int64_t offset = 101;
    for (; offset < 10'100 && pipeline.held() == 0; ++offset) {
      pipeline.Take(Batch({DueIn(offset, 1'000, value_)}));
    }
    EXPECT_EQ(pipeline.held(), 1u) << "the full disk never refused an append";
    return offset - 1;
  }

  testing::SmallFilesystem disk_{"ingest_pipeline_full_disk", 4 * 1024 * 1024};
  const std::string value_ = std::string(1000, 'v');
};

TEST_F(IngestPipelineFullDiskTest, RecordsWaitInOrderBehindTheRefusedOneAndGoInOnceThereIsRoom) {
  IngestPipeline pipeline = MakePipeline();
  const int64_t refused = TakeUntilRefused(pipeline);
  const int64_t last = refused + 2;
  pipeline.Take(Batch({DueIn(refused + 1, 1'000, value_), DueIn(last, 1'000, value_)}));
  EXPECT_EQ(pipeline.held(), 3u) << "the records behind it wait too";
  EXPECT_EQ(store_->offsets().last_added(), refused - 1);
  EXPECT_EQ(pipeline.counts().append_failures, 1u);
  EXPECT_EQ(std::count(calls_.begin(), calls_.end(), "held changed"), 1);

  disk_.Free();
  io_.run_for(std::chrono::seconds(10));  // the retry timer: 100 ms at first
  EXPECT_EQ(pipeline.held(), 0u);
  EXPECT_EQ(std::count(calls_.begin(), calls_.end(), "held changed"), 2);
  EXPECT_EQ(store_->offsets().last_added(), last);
  EXPECT_EQ(pipeline.counts().stored, static_cast<uint64_t>(last + 1 - 100));
  ASSERT_EQ(handover_.scheduled.size(), static_cast<size_t>(last + 1 - 100));
  for (size_t i = 0; i < handover_.scheduled.size(); ++i) {
    EXPECT_EQ(handover_.scheduled[i].record.source_offset(), static_cast<int64_t>(100 + i));
  }
  EXPECT_TRUE(failed_.ok());
}

TEST_F(IngestPipelineFullDiskTest, RecordsOfARevokedPartitionStopWaiting) {
  IngestPipeline pipeline = MakePipeline();
  const int64_t refused = TakeUntilRefused(pipeline);
  pipeline.DropHeld({kStoredPartition});
  EXPECT_EQ(pipeline.held(), 0u);
  disk_.Free();
  io_.run_for(std::chrono::milliseconds(500));
  // Not stored here: whoever reads the partition next reads it again.
  EXPECT_EQ(store_->offsets().last_added(), refused - 1);
}

}  // namespace
}  // namespace delaybridge::plugin
