// PartitionStore and the preloader on a real DelayLogStore in a temporary directory: records
// inside the preloaded horizon go to the wheel at once while their source offsets wait for
// durability, the preloader walks seconds in order and skips what an earlier run delivered,
// and no checkpoint can ever claim an undelivered record.
#include "plugin/partition_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "plugin/preloader.h"
#include "storage/delivery_checkpoint.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

constexpr int64_t kHourStartMs = 1'800'000'000'000;  // an exact hour boundary
const TopicPartitionId kId{"delayed", 2};

DelayedRecord Record(int64_t offset, int64_t deliver_at_ms) {
  DelayedRecord r;
  r.target_topic = "delivered";
  r.key = "k" + std::to_string(offset);
  r.value = "v" + std::to_string(offset);
  r.source_topic = kId.topic;
  r.source_partition = kId.partition;
  r.source_offset = offset;
  r.requested_deliver_at_ms = deliver_at_ms;
  return r;
}

class PartitionStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<PartitionStore> Open(int64_t now_ms) {
    storage::StoreOptions options;
    storage::RecoveryReport report;
    auto store = PartitionStore::Open(kId, dir_.path(), options, now_ms, &report);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // The position when the record goes to the wheel at once (inside the preloaded horizon).
  std::optional<RecordPosition> Append(PartitionStore& store, int64_t offset, int64_t deliver_at_ms,
                                       int64_t now_ms) {
    const DelayedRecord r = Record(offset, deliver_at_ms);
    auto appended = store.Append(r, EncodeDelayedRecord(r), now_ms);
    EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    return appended.ok() ? *appended : std::nullopt;
  }

  // Preloads up to horizon_second and returns the source offsets loaded, in order.
  std::vector<int64_t> Preload(PartitionStore& store, int64_t horizon_second,
                               size_t budget = 1'000'000) {
    std::vector<int64_t> offsets;
    auto result = PreloadStore(
        store, horizon_second, budget,
        [&offsets](RecordPosition, DelayedRecord&& r) { offsets.push_back(r.source_offset); },
        [](const std::string& what) { ADD_FAILURE() << what; });
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return offsets;
  }

  testing::TempDir dir_{"partition_store_test"};
};

TEST_F(PartitionStoreTest, FreshStoreStartsNowInItsOwnDirectory) {
  auto store = Open(kHourStartMs + 1234);
  EXPECT_FALSE(store->had_checkpoint());
  EXPECT_EQ(store->start(), (RecordPosition{kHourStartMs + 1234, 0}));
  EXPECT_EQ(store->preloaded_until_second(), (kHourStartMs + 1234) / 1000);
  EXPECT_TRUE(std::filesystem::is_directory(dir_.path() + "/delayed-2"));
}

TEST_F(PartitionStoreTest, InHorizonRecordsGoToTheWheelAtOnceAndOffsetsFollowDurability) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  store->set_preloaded_until_second(now / 1000 + 5);
  // Inside the horizon: straight to the wheel, at its requested time.
  EXPECT_EQ(Append(*store, 10, now + 2000, now), (RecordPosition{now + 2000, 0}));
  // Beyond: the preloader will find it.
  EXPECT_EQ(Append(*store, 11, now + 60'000, now), std::nullopt);
  // In the past: due now (the effective time, never earlier).
  EXPECT_EQ(Append(*store, 12, now - 9000, now), (RecordPosition{now, 0}));
  EXPECT_EQ(store->tracker().outstanding(), 2u);
  EXPECT_EQ(store->offsets().Committable(), 10);  // nothing durable yet
  EXPECT_TRUE(store->needs_sync());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_FALSE(store->needs_sync());
  EXPECT_EQ(store->offsets().TakeCommittable(), 13);
  // The steps of Sync, as the bridge runs them with the fdatasyncs on another thread.
  Append(*store, 13, now + 3000, now);
  EXPECT_EQ(store->offsets().Committable(), 13);  // 13 is not durable
  auto sync = store->BeginSync();
  ASSERT_TRUE(sync.ok()) << sync.status().ToString();
  Append(*store, 14, now + 3000, now);  // ingest goes on meanwhile
  Status run_status;
  std::thread([&] { run_status = (*sync)->Run(); }).join();
  EXPECT_EQ(store->offsets().Committable(), 13);  // settled only by FinishSync
  ASSERT_TRUE(store->FinishSync(std::move(sync).value(), run_status).ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 14);  // 14 came after the sync began
  EXPECT_TRUE(store->needs_sync());
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 15);
}

TEST_F(PartitionStoreTest, CheckpointInStepsWritesOneAtATimeAndKeepsAFailedOneDue) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  store->set_preloaded_until_second(now / 1000 + 5);
  auto cp = store->TakeCheckpointDue(now + 1000);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->next_deliver_at_ms, now + 1000);
  EXPECT_FALSE(store->TakeCheckpointDue(now + 2000).has_value());  // one write in flight
  // A failed write (e.g. a full disk) leaves the last persisted checkpoint as it was.
  EXPECT_FALSE(store->CheckpointWritten(*cp, Status::IOError("no space left")).ok());
  EXPECT_EQ(store->last_persisted(), (RecordPosition{now, 0}));
  cp = store->TakeCheckpointDue(now + 2000);
  ASSERT_TRUE(cp.has_value());
  ASSERT_TRUE(store
                  ->CheckpointWritten(
                      *cp, storage::WriteDeliveryCheckpoint(dir_.path() + "/delayed-2", *cp))
                  .ok());
  EXPECT_EQ(store->last_persisted(), (RecordPosition{now + 2000, 0}));
  EXPECT_FALSE(store->TakeCheckpointDue(now + 2000).has_value());  // nothing moved
}

TEST_F(PartitionStoreTest, PreloaderWalksSecondsInOrderUpToTheHorizon) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  Append(*store, 1, now + 3500, now);
  Append(*store, 2, now + 1200, now);
  Append(*store, 3, now + 1100, now);
  Append(*store, 4, now + 9000, now);
  Append(*store, 5, now + 7'200'000, now);  // two hours later, another hour file
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(Preload(*store, now / 1000 + 5), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(store->preloaded_until_second(), now / 1000 + 5);
  EXPECT_EQ(Preload(*store, now / 1000 + 10), (std::vector<int64_t>{4}));
  EXPECT_EQ(Preload(*store, now / 1000 + 7201), (std::vector<int64_t>{5}));
  EXPECT_EQ(store->tracker().outstanding(), 5u);
}

TEST_F(PartitionStoreTest, PreloadBudgetStopsAfterAWholeSecond) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  for (int i = 0; i < 3; ++i) Append(*store, i, now + 1000, now);
  Append(*store, 3, now + 2000, now);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(Preload(*store, now / 1000 + 5, 2), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(store->preloaded_until_second(), now / 1000 + 2);
  EXPECT_EQ(Preload(*store, now / 1000 + 5, 2), (std::vector<int64_t>{3}));
}

TEST_F(PartitionStoreTest, RestartSkipsWhatWasDeliveredAndKeepsTheRest) {
  const int64_t now = kHourStartMs;
  {
    auto store = Open(now);
    Append(*store, 1, now + 1000, now);
    Append(*store, 2, now + 1000, now);
    Append(*store, 3, now + 2000, now);
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_EQ(Preload(*store, now / 1000 + 5).size(), 3u);
    EXPECT_TRUE(store->tracker().Acknowledge({now + 1000, 0}));  // offset 1 delivered
    ASSERT_TRUE(store->PersistCheckpoint(now + 1500).ok());
    EXPECT_EQ(store->last_persisted(), (RecordPosition{now + 1000, 1}));
  }
  auto store = Open(now + 10'000);
  EXPECT_TRUE(store->had_checkpoint());
  EXPECT_EQ(store->start(), (RecordPosition{now + 1000, 1}));
  EXPECT_EQ(Preload(*store, now / 1000 + 20), (std::vector<int64_t>{2, 3}));
}

// With nothing outstanding, the checkpoint stops at "now": a record appended right after, due
// immediately, must still be found by the next run after a crash.
TEST_F(PartitionStoreTest, CheckpointNeverPassesARecordAppendedLater) {
  const int64_t now = kHourStartMs + 10'000;
  {
    auto store = Open(now);
    ASSERT_TRUE(Preload(*store, now / 1000 + 6).empty());  // horizon 6 s ahead, all empty
    ASSERT_TRUE(store->PersistCheckpoint(now).ok());
    EXPECT_EQ(store->last_persisted(), (RecordPosition{now, 0}));
    Append(*store, 7, 0, now + 1);  // x-delay 0: due at once, inside the horizon
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->PersistCheckpoint(now + 2).ok());  // it is outstanding: no move past it
    EXPECT_EQ(store->last_persisted(), (RecordPosition{now + 1, 0}));
    // Crash here: delivered or not, the record must come back.
  }
  auto store = Open(now + 50);
  EXPECT_EQ(Preload(*store, (now + 50) / 1000 + 6), (std::vector<int64_t>{7}));
}

// The source-offset marker only skips records between the group's committed offset and the
// marker; with no commit (new group, re-created topic) it is ignored, or it would skip records.
TEST_F(PartitionStoreTest, SourceOffsetMarkerIsTrustedOnlyAboveTheCommittedOffset) {
  {
    auto store = Open(kHourStartMs);
    ASSERT_TRUE(store->MarkCommittable(10).ok());
  }
  auto store = Open(kHourStartMs);
  EXPECT_EQ(store->stored_below(), 10);
  store->ResumeFrom(5);
  EXPECT_EQ(store->stored_below(), 10);  // offsets 5..9 are in the store already
  store = Open(kHourStartMs);
  store->ResumeFrom(std::nullopt);
  EXPECT_EQ(store->stored_below(), std::nullopt);
  store = Open(kHourStartMs);
  store->ResumeFrom(12);
  EXPECT_EQ(store->stored_below(), std::nullopt);
}

TEST_F(PartitionStoreTest, FullyDeliveredHoursAreDeleted) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  Append(*store, 1, now + 1000, now);
  Append(*store, 2, now + 3'600'000 + 1000, now);
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_EQ(Preload(*store, now / 1000 + 5).size(), 1u);
  EXPECT_EQ(store->log().Hours().size(), 2u);
  EXPECT_TRUE(store->tracker().Acknowledge({now + 1000, 0}));
  // An hour later the first hour is behind the watermark.
  ASSERT_EQ(Preload(*store, (now + 3'600'000) / 1000).size(), 0u);
  ASSERT_TRUE(store->PersistCheckpoint(now + 3'600'000).ok());
  EXPECT_EQ(store->log().Hours(), (std::vector<int64_t>{now / 3'600'000 + 1}));
  auto cp = storage::ReadDeliveryCheckpoint(store->log().dir());
  ASSERT_TRUE(cp.ok() && cp->has_value());
  EXPECT_EQ((*cp)->next_deliver_at_ms, now + 3'600'000);
}

}  // namespace
}  // namespace delaybridge::plugin
