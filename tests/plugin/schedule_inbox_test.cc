// ScheduleInbox: a batch wakes the delivery thread only when no promise covers it (none made,
// or a record due before the promised look plus the margin), once until the thread takes the
// inbox; Promise reports batches put under the promise it replaces; Take returns batches in the
// order put.
#include "plugin/schedule_inbox.h"

#include <gtest/gtest.h>

#include <vector>

namespace delaybridge::plugin {
namespace {

constexpr int64_t kNowMs = 1'000'000;
constexpr int64_t kMarginMs = ScheduleInbox::kPromiseMarginMs;
const TopicPartitionId kStore{"delayed", 0};

std::vector<DueRecord> Batch(int64_t source_offset) {
  DelayedRecord r;
  r.target_topic = "target";
  r.source_topic = "delayed";
  r.source_offset = source_offset;
  r.requested_deliver_at_ms = kNowMs;
  std::vector<DueRecord> batch;
  batch.push_back(DueRecord{kStore, RecordPosition{kNowMs, 0}, EncodedRecord::Encode(r)});
  return batch;
}

std::vector<int64_t> SourceOffsets(const std::vector<std::vector<DueRecord>>& batches) {
  std::vector<int64_t> offsets;
  for (const auto& batch : batches) {
    for (const DueRecord& r : batch) offsets.push_back(r.record.source_offset());
  }
  return offsets;
}

TEST(ScheduleInboxTest, WithoutAPromiseTheFirstBatchAsksForAWakeUpAndTheRestWaitForIt) {
  ScheduleInbox inbox;
  EXPECT_TRUE(inbox.Put(Batch(1), kNowMs + 60'000));
  EXPECT_FALSE(inbox.Put(Batch(2), kNowMs + 60'000));  // the wake-up asked for takes it too
  EXPECT_EQ(SourceOffsets(inbox.Take()), (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(inbox.Take().empty());
  EXPECT_TRUE(inbox.Put(Batch(3), kNowMs + 60'000));  // taken: the next one asks again
}

TEST(ScheduleInboxTest, APromiseCoversTheBatchesDueAtLeastTheMarginAfterIt) {
  ScheduleInbox inbox;
  EXPECT_FALSE(inbox.Promise(kNowMs + 2));
  EXPECT_FALSE(inbox.Put(Batch(1), kNowMs + 2 + kMarginMs));
  EXPECT_FALSE(inbox.Put(Batch(2), kNowMs + 5'000));
  EXPECT_TRUE(inbox.Put(Batch(3), kNowMs + 2 + kMarginMs - 1));  // due before the look's margin
  EXPECT_FALSE(inbox.Put(Batch(4), kNowMs));                     // asked already
  EXPECT_EQ(SourceOffsets(inbox.Take()), (std::vector<int64_t>{1, 2, 3, 4}));

  EXPECT_FALSE(inbox.Promise(std::nullopt));  // paused: no promise, every batch asks
  EXPECT_TRUE(inbox.Put(Batch(5), kNowMs + 5'000));
}

TEST(ScheduleInboxTest, PromiseReportsTheBatchesPutUnderThePromiseItReplaces) {
  ScheduleInbox inbox;
  EXPECT_FALSE(inbox.Promise(kNowMs));
  EXPECT_TRUE(inbox.Take().empty());  // the thread took the inbox; a batch comes before it promises
  EXPECT_FALSE(inbox.Put(Batch(1), kNowMs + 1'000));
  EXPECT_TRUE(inbox.Promise(kNowMs + 2'000));  // the new promise would leave it behind: take it
  EXPECT_EQ(SourceOffsets(inbox.Take()), (std::vector<int64_t>{1}));
  EXPECT_FALSE(inbox.Promise(kNowMs + 2'000));
}

}  // namespace
}  // namespace delaybridge::plugin
