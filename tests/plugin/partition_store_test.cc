// PartitionStore and the preloader on a real DelayLogStore in a temporary directory: records
// inside the preloaded horizon go to the wheel at once while their source offsets wait for
// durability, the preloader walks seconds in order and skips what an earlier run delivered,
// and no checkpoint can ever claim an undelivered record.
#include "plugin/partition_store.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "plugin/preloader.h"
#include "plugin/progress_metadata.h"
#include "plugin/stored_cancel.h"
#include "storage/delivery_checkpoint.h"
#include "storage/format.h"
#include "storage/hour_files.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

// Every second before horizon_second, while fewer than budget records were loaded.
PreloadReach UpTo(int64_t horizon_second, size_t budget = 1'000'000) {
  return PreloadReach{.due_second = horizon_second,
                      .due_budget = budget,
                      .near_second = horizon_second,
                      .near_budget = budget,
                      .horizon_second = horizon_second,
                      .ahead_budget = budget};
}

class PartitionStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<PartitionStore> Open(int64_t now_ms,
                                       const std::optional<ProgressMetadata>& kafka = {}) {
    storage::StoreOptions options;
    storage::RecoveryReport report;
    auto store =
        PartitionStore::Open(kStoredPartition, dir_.path(), options, now_ms, kafka, &report);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // The position when the record goes to the wheel at once (inside the preloaded horizon).
  std::optional<RecordPosition> Append(PartitionStore& store, int64_t offset, int64_t deliver_at_ms,
                                       int64_t now_ms) {
    const DelayedRecord r = StoredRecordAt(offset, deliver_at_ms);
    auto appended = store.Append(EncodedRecord::Encode(r), now_ms);
    EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    return appended.ok() ? *appended : std::nullopt;
  }

  // Preloads up to horizon_second and returns the source offsets loaded, in order.
  std::vector<int64_t> Preload(PartitionStore& store, int64_t horizon_second,
                               size_t budget = 1'000'000) {
    return Preload(store, UpTo(horizon_second, budget));
  }
  std::vector<int64_t> Preload(PartitionStore& store, const PreloadReach& reach) {
    std::vector<int64_t> offsets;
    auto result = PreloadStore(
        store, reach,
        [&offsets](RecordPosition, EncodedRecord&& r) { offsets.push_back(r.source_offset()); },
        [](const std::string& what) { ADD_FAILURE() << what; });
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (result.ok()) {
      EXPECT_TRUE(result->retry.ok()) << result->retry.ToString();
    }
    return offsets;
  }

  // The first store of a model test: reading starts at offset 1000 at kHourStartMs, nothing
  // stored yet, the preloader at the horizon.
  std::unique_ptr<PartitionStore> OpenFirstStore(const testing::TempDir& dir, bool exactly_once) {
    storage::StoreOptions options;
    auto store = PartitionStore::Open(kStoredPartition, dir.path(), options, kHourStartMs, {},
                                      nullptr, exactly_once);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    EXPECT_EQ((*store)->Resume(1000, std::nullopt), 1000);
    EXPECT_TRUE(Preload(**store, kHourStartMs / 1000 + 5).empty());
    return std::move(store).value();
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

// Reproduces an idle bridge writing and fdatasyncing every store's checkpoint each interval,
// although a watermark that only followed the clock protects no delivered record.
TEST_F(PartitionStoreTest, ACheckpointThatOnlyFollowedTheClockIsWrittenOnceASecond) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  store->set_preloaded_until_second(now / 1000 + 5);
  const std::string dir = dir_.path() + "/delayed-2";
  auto write = [&](const storage::DeliveryCheckpoint& cp) {
    ASSERT_TRUE(store->CheckpointWritten(cp, storage::WriteDeliveryCheckpoint(dir, cp)).ok());
  };
  auto cp = store->TakeCheckpointDue(now + 1000);
  ASSERT_TRUE(cp.has_value());
  write(*cp);
  // Only the clock moved: not again within a second of the last write.
  EXPECT_FALSE(store->TakeCheckpointDue(now + 1100).has_value());
  EXPECT_FALSE(store->TakeCheckpointDue(now + 1999).has_value());
  cp = store->TakeCheckpointDue(now + 2000);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->next_deliver_at_ms, now + 2000);
  write(*cp);
  // An acknowledged record moves it past a delivery: written at the next interval.
  const std::optional<RecordPosition> record = Append(*store, 1, now + 2050, now + 2000);
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(store->TakeCheckpointDue(now + 2100).has_value());
  ASSERT_TRUE(store->Acknowledge(*record));
  cp = store->TakeCheckpointDue(now + 2100);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->next_deliver_at_ms, now + 2100);
  // A failed write keeps it due at the next interval.
  EXPECT_FALSE(store->CheckpointWritten(*cp, Status::IOError("no space left")).ok());
  cp = store->TakeCheckpointDue(now + 2200);
  ASSERT_TRUE(cp.has_value());
  write(*cp);
  EXPECT_FALSE(store->TakeCheckpointDue(now + 2300).has_value());
  // Revocation writes whatever moved it.
  ASSERT_TRUE(store->PersistCheckpoint(now + 2300).ok());
  EXPECT_EQ(store->last_persisted(), (RecordPosition{now + 2300, 0}));
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

// Memory decides how early a second is loaded (BridgePreloadReach, here with a bound of 100): the
// next second once it fits below three quarters of the bound, seconds further ahead once they fit
// below half of it, and any second half a second before it falls due while memory is below the
// bound. So the records appended to loaded seconds have room before consumption pauses, even
// when one second's records are more than half the bound.
TEST_F(PartitionStoreTest, ASecondIsLoadedWhenItFitsOrHalfASecondBeforeItFallsDue) {
  const int64_t now = kHourStartMs + 10'000;
  const int64_t s = now / 1000;
  auto store = Open(now);
  int64_t offset = 0;
  const auto fill = [&](int64_t second, int records) {
    for (int i = 0; i < records; ++i) {
      EXPECT_EQ(Append(*store, offset++, second * 1000 + i, now), std::nullopt);
    }
  };
  fill(s + 1, 30);  // offsets 0-29
  fill(s + 2, 30);  // 30-59
  fill(s + 4, 1);   // 60
  fill(s + 6, 20);  // 61-80
  fill(s + 7, 20);  // 81-100
  fill(s + 8, 20);  // 101-120
  ASSERT_TRUE(store->Sync().ok());
  const auto offsets = [](int64_t first, int64_t end) {
    std::vector<int64_t> v;
    for (int64_t o = first; o < end; ++o) v.push_back(o);
    return v;
  };

  // This second's 60 held: the next second's 30 would take memory past three quarters.
  PreloadReach reach = BridgePreloadReach(*store, now, 5, 60, 100);
  EXPECT_EQ(reach.due_second, s + 1);
  EXPECT_EQ(reach.due_budget, 40u);
  EXPECT_EQ(reach.near_second, s + 2);
  EXPECT_EQ(reach.near_budget, 15u);
  EXPECT_EQ(reach.horizon_second, s + 6);
  EXPECT_EQ(reach.ahead_budget, 0u);
  EXPECT_TRUE(Preload(*store, reach).empty());
  EXPECT_EQ(store->preloaded_until_second(), s + 1);

  // 45 held: it fits. The second after it would not fit below half, so it waits on disk.
  EXPECT_EQ(Preload(*store, BridgePreloadReach(*store, now + 400, 5, 45, 100)), offsets(0, 30));
  EXPECT_EQ(store->preloaded_until_second(), s + 2);

  // 80 held: the second at s + 2, next from s + 1.4 on, waits until it falls due within half a
  // second, and is then loaded whole although that takes memory past the bound.
  EXPECT_TRUE(Preload(*store, BridgePreloadReach(*store, now + 1400, 5, 80, 100)).empty());
  EXPECT_EQ(Preload(*store, BridgePreloadReach(*store, now + 1500, 5, 80, 100)), offsets(30, 60));
  EXPECT_EQ(store->preloaded_until_second(), s + 4);

  // At the bound nothing is loaded, not even what falls due: consumption is paused then, and
  // deliveries make room.
  EXPECT_TRUE(Preload(*store, BridgePreloadReach(*store, now + 3600, 5, 100, 100)).empty());
  EXPECT_EQ(Preload(*store, BridgePreloadReach(*store, now + 3600, 5, 99, 100)), offsets(60, 61));

  EXPECT_EQ(store->preloaded_until_second(), s + 6);

  // With little held, seconds further ahead load while they fit below half the bound.
  EXPECT_EQ(Preload(*store, BridgePreloadReach(*store, now + 4000, 5, 5, 100)), offsets(61, 101));
  EXPECT_EQ(store->preloaded_until_second(), s + 8);
}

// Out of descriptors (or any I/O error) is not damage: skipping the second would let the
// checkpoint pass its records and retention delete them.
TEST_F(PartitionStoreTest, PreloaderRetriesASecondItCannotReadForNowAndSkipsNothing) {
  const int64_t now = kHourStartMs;
  {
    auto store = Open(now);
    Append(*store, 1, now + 1000, now);
    Append(*store, 2, now + 2000, now);
    ASSERT_TRUE(store->Sync().ok());
  }
  auto store = Open(now);  // the hour is closed: reading it opens its files
  const int64_t preloaded_until = store->preloaded_until_second();
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::dup(0);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit exhausted = saved;
  exhausted.rlim_cur = static_cast<rlim_t>(lowest_free);  // the next open fails with EMFILE
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &exhausted), 0);
  std::vector<int64_t> loaded;
  auto result = PreloadStore(
      *store, UpTo(now / 1000 + 5),
      [&loaded](RecordPosition, EncodedRecord&& r) { loaded.push_back(r.source_offset()); },
      [](const std::string& what) { ADD_FAILURE() << "reported as damage: " << what; });
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->retry.ok());
  EXPECT_NE(result->retry.message().find("Too many open files"), std::string::npos)
      << result->retry.ToString();
  EXPECT_TRUE(loaded.empty());
  EXPECT_EQ(store->preloaded_until_second(), preloaded_until);  // nothing passed
  EXPECT_EQ(Preload(*store, now / 1000 + 5), (std::vector<int64_t>{1, 2}));
}

// A damaged checkpoint costs re-deliveries, never the partition: the store opens from its first
// hour and every record in it is loaded again.
TEST_F(PartitionStoreTest, ADamagedCheckpointIsIgnoredAndNothingIsSkipped) {
  const int64_t now = kHourStartMs;
  {
    auto store = Open(now);
    Append(*store, 1, now + 1000, now);
    Append(*store, 2, now + 2000, now);
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_EQ(Preload(*store, now / 1000 + 5).size(), 2u);
    EXPECT_TRUE(store->tracker().Acknowledge({now + 1000, 0}));
    ASSERT_TRUE(store->PersistCheckpoint(now + 1500).ok());
  }
  const std::string path =
      dir_.path() + "/" + kStoredPartition.ToString() + "/" + storage::kCheckpointFileName;
  std::string bytes = testing::ReadFile(path);
  ASSERT_FALSE(bytes.empty());
  // The store's only checkpoint is in slot 1 (slot 0 is empty): no valid slot is left.
  bytes[storage::CheckpointSlotOffset(1) + 8] ^= 0x5a;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  auto store = Open(now + 10'000);
  ASSERT_NE(store, nullptr);
  EXPECT_NE(store->damaged_checkpoint().find("checksum mismatch"), std::string::npos)
      << store->damaged_checkpoint();
  EXPECT_FALSE(store->had_checkpoint());
  EXPECT_EQ(Preload(*store, now / 1000 + 20), (std::vector<int64_t>{1, 2}));
}

// Record contents are the bridge's user's only, whatever the umask.
TEST_F(PartitionStoreTest, StoreFilesAndDirectoryAreTheBridgesUsersOnly) {
  const mode_t saved_umask = ::umask(0);
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  Append(*store, 1, now + 1000, now);
  ASSERT_TRUE(store->Sync().ok());
  ASSERT_TRUE(store->MarkCommittable(2).ok());
  ASSERT_EQ(Preload(*store, now / 1000 + 5).size(), 1u);
  EXPECT_TRUE(store->tracker().Acknowledge({now + 1000, 0}));
  ASSERT_TRUE(store->PersistCheckpoint(now + 1500).ok());
  ::umask(saved_umask);
  const std::filesystem::path dir =
      std::filesystem::path(dir_.path()) / kStoredPartition.ToString();
  EXPECT_EQ(std::filesystem::status(dir).permissions(), std::filesystem::perms::owner_all);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    const auto perms = entry.status().permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
              std::filesystem::perms::none)
        << entry.path();
  }
  EXPECT_GE(files, 5u);  // data, index, checkpoint, marker, store id
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

// A wall clock that ran an hour ahead (an NTP step, later corrected) left the checkpoint an hour
// ahead of the corrected clock, and a restart reads it back: records arriving now are placed
// after it, and are still loaded and handed over with the time they asked for.
TEST_F(PartitionStoreTest, AfterTheClockSteppedBackRecordsAreLoadedWithTheTimeTheyAsked) {
  const int64_t now = kHourStartMs + 10'000;
  const int64_t ahead = now + 3'600'000;
  {
    auto store = Open(now);  // then the clock jumps an hour ahead
    ASSERT_TRUE(Preload(*store, store->PreloadHorizonSecond(ahead, 5)).empty());
    ASSERT_TRUE(store->PersistCheckpoint(ahead).ok());
    EXPECT_EQ(store->last_persisted(), (RecordPosition{ahead, 0}));
  }
  auto store = Open(now);  // the clock stepped back; the bridge restarted
  EXPECT_EQ(store->start(), (RecordPosition{ahead, 0}));
  EXPECT_FALSE(Append(*store, 1, now + 2000, now).has_value());  // placed at the checkpoint
  std::vector<std::pair<RecordPosition, int64_t>> loaded;        // position, time asked for
  auto result = PreloadStore(
      *store, UpTo(store->PreloadHorizonSecond(now, 5)),
      [&loaded](RecordPosition position, EncodedRecord&& r) {
        loaded.emplace_back(position, r.requested_deliver_at_ms());
      },
      [](const std::string& what) { ADD_FAILURE() << what; });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(loaded.size(), 1u) << "not loaded until the clock reaches the checkpoint";
  EXPECT_EQ(loaded[0].first, (RecordPosition{ahead, 0}));
  EXPECT_EQ(loaded[0].second, now + 2000);
  // The next record lands in the loaded second: straight to the wheel.
  EXPECT_EQ(Append(*store, 2, now + 3000, now + 1), (RecordPosition{ahead, 1}));
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
  EXPECT_EQ(store->Resume(5, std::nullopt), 5);
  EXPECT_EQ(store->stored_below(), 10);  // offsets 5..9 are in the store already
  store = Open(kHourStartMs);
  EXPECT_EQ(store->Resume(std::nullopt, std::nullopt), std::nullopt);
  EXPECT_EQ(store->stored_below(), std::nullopt);
  store = Open(kHourStartMs);
  EXPECT_EQ(store->Resume(12, std::nullopt), 12);
  EXPECT_EQ(store->stored_below(), std::nullopt);
}

// With Kafka's progress from this very store, reading resumes where the store's durable
// content ends (the marker), not at the low watermark far behind it.
TEST_F(PartitionStoreTest, ItsOwnStoreIsReusedAndReadingResumesAtTheMarker) {
  std::string store_id;
  {
    auto store = Open(kHourStartMs);
    store_id = store->store_id();
    Append(*store, 40, kHourStartMs + 30'000, kHourStartMs);
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->MarkCommittable(41).ok());
  }
  const ProgressMetadata kafka{store_id, kHourStartMs + 1000, 38, 41};
  auto store = Open(kHourStartMs + 2000, kafka);
  EXPECT_FALSE(store->rebuilt());
  EXPECT_EQ(store->store_id(), store_id);
  EXPECT_EQ(store->Resume(30, kafka), 41);
  EXPECT_EQ(store->start(), (RecordPosition{kHourStartMs + 1000, 0}));  // Kafka's checkpoint
  EXPECT_EQ(store->log().Hours().size(), 1u);
  // Offsets of the recovered records are unknown: the low watermark stays at the commit.
  auto commit = store->TakeProgressToCommit(kHourStartMs + 2000, true);
  ASSERT_TRUE(commit.has_value());
  EXPECT_EQ(commit->offset, 30);
}

// Progress committed by another store means this directory holds an older history of the
// partition: it is emptied, reading starts at the low watermark, and what the previous owner
// finished is skipped.
TEST_F(PartitionStoreTest, AForeignStoreIsEmptiedAndRebuiltFromTheLowWatermark) {
  {
    auto store = Open(kHourStartMs);
    Append(*store, 3, kHourStartMs + 30'000, kHourStartMs);
    ASSERT_TRUE(store->Sync().ok());
  }
  const ProgressMetadata kafka{"00000000000000aa", kHourStartMs + 20'000, 15, 20};
  auto store = Open(kHourStartMs + 25'000, kafka);
  EXPECT_TRUE(store->rebuilt());
  EXPECT_NE(store->store_id(), "00000000000000aa");
  EXPECT_TRUE(store->log().Hours().empty());
  EXPECT_EQ(store->Resume(10, kafka), 10);
  EXPECT_TRUE(store->Finished(10, kHourStartMs + 19'999));   // on time, before C
  EXPECT_FALSE(store->Finished(11, kHourStartMs + 20'000));  // at C: delivered again
  EXPECT_FALSE(store->Finished(16, kHourStartMs + 1000));    // may be late: again
  EXPECT_FALSE(store->Finished(20, kHourStartMs + 1000));    // never read before
  // Until it has read everything the previous commit describes, that commit stays the truth.
  store->progress().AddFinished(18);
  EXPECT_FALSE(store->TakeProgressToCommit(kHourStartMs + 25'000, true).has_value());
  EXPECT_FALSE(store->EndRebuildWhenCaughtUp(kHourStartMs + 25'000).has_value());
  store->progress().AddFinished(19);  // caught up: the rule is off, its own progress counts
  EXPECT_TRUE(store->EndRebuildWhenCaughtUp(kHourStartMs + 25'000).has_value());
  EXPECT_TRUE(store->TakeProgressToCommit(kHourStartMs + 25'000, true).has_value());
  EXPECT_FALSE(store->Finished(12, kHourStartMs + 1000));
}

// An instance that has rebuilt a partition can lose it before its first commit of the partition
// lands (librdkafka before 2.10.0 drops the whole assignment when a commit meets a rebalance
// that bumped the generation) and get it back at once: the group's last commit is then still the
// one the store was rebuilt from, and the store is reused with its checkpoint. Emptying it again
// would deliver again everything it had delivered since the takeover.
TEST_F(PartitionStoreTest, AStoreRebuiltFromACommitIsReusedWhileThatCommitIsTheGroupsLast) {
  const int64_t now = kHourStartMs + 25'000;
  const ProgressMetadata kafka{"00000000000000aa", kHourStartMs + 20'000, 15, 20};
  std::string rebuilt_id;
  RecordPosition delivered_until;
  {
    auto store = Open(now, kafka);
    ASSERT_TRUE(store->rebuilt());
    rebuilt_id = store->store_id();
    ASSERT_EQ(store->Resume(10, kafka), 10);
    Append(*store, 20, now + 1000, now);
    Append(*store, 21, now + 2000, now);
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->MarkCommittable(22).ok());
    ASSERT_EQ(Preload(*store, now / 1000 + 5).size(), 2u);
    ASSERT_TRUE(store->Acknowledge({now + 1000, 0}));  // offset 20 delivered
    ASSERT_TRUE(store->PersistCheckpoint(now + 1500).ok());
    delivered_until = store->last_persisted();
    ASSERT_GT(delivered_until, (RecordPosition{now + 1000, 0}));
  }
  auto store = Open(now + 1600, kafka);
  EXPECT_FALSE(store->rebuilt());
  EXPECT_EQ(store->store_id(), rebuilt_id);
  EXPECT_EQ(store->start(), delivered_until);
  EXPECT_EQ(store->Resume(10, kafka), 22);  // at its marker
  EXPECT_EQ(Preload(*store, now / 1000 + 20), (std::vector<int64_t>{21}));
}

// A record the previous owner had pending, on time there (offset 12, below its late_below 15),
// was overdue when the rebuild read it again and was placed late here. After a reuse its offset
// is unknown: late_below must stay at the committed offset until it is delivered, or a rebuild
// from the next commit would skip it as finished.
TEST_F(PartitionStoreTest, AStoreReusedAfterATakeoverHoldsLateBelowAtTheCommittedOffset) {
  const int64_t now = kHourStartMs + 25'000;
  const int64_t asked_ms = kHourStartMs + 22'000;
  const ProgressMetadata kafka{"00000000000000aa", kHourStartMs + 20'000, 15, 20};
  {
    auto store = Open(now, kafka);
    ASSERT_TRUE(store->rebuilt());
    ASSERT_EQ(store->Resume(10, kafka), 10);
    Append(*store, 12, asked_ms, now);  // placed at now: late
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->MarkCommittable(13).ok());
  }
  auto store = Open(now + 1000, kafka);
  ASSERT_TRUE(store->reused_after_takeover());
  ASSERT_EQ(store->Resume(10, kafka, now + 1000, 3000), 13);
  for (int64_t offset = 13; offset < 20; ++offset) store->progress().AddFinished(offset);
  ASSERT_TRUE(store->EndRebuildWhenCaughtUp(now + 1000).has_value());
  ASSERT_EQ(Preload(*store, (now + 2000) / 1000), (std::vector<int64_t>{12}));  // pending
  auto commit = store->TakeProgressToCommit(now + 1000, true);
  ASSERT_TRUE(commit.has_value());
  auto metadata = ParseProgressMetadata(commit->metadata);
  ASSERT_TRUE(metadata.ok() && metadata->has_value());
  EXPECT_GT((*metadata)->checkpoint_ms, asked_ms) << commit->metadata;  // the trap is set
  EXPECT_FALSE((*metadata)->Finished(12, asked_ms)) << commit->metadata;
}

// Once anyone has committed since the takeover (another store, or the same store with moved
// progress), the rebuilt store holds an older history and is emptied like any foreign one.
TEST_F(PartitionStoreTest, AStoreRebuiltFromACommitIsEmptiedOnceAnotherCommitFollowedIt) {
  const int64_t now = kHourStartMs + 25'000;
  const ProgressMetadata kafka{"00000000000000aa", kHourStartMs + 20'000, 15, 20};
  const ProgressMetadata later_commits[] = {
      {"00000000000000bb", kHourStartMs + 20'000, 15, 20},
      {"00000000000000aa", kHourStartMs + 21'000, 15, 20},
      {"00000000000000aa", kHourStartMs + 20'000, 16, 20},
      {"00000000000000aa", kHourStartMs + 20'000, 15, 21},
  };
  for (const ProgressMetadata& later : later_commits) {
    std::string rebuilt_id;
    {
      auto store = Open(now, kafka);
      ASSERT_TRUE(store->rebuilt());
      rebuilt_id = store->store_id();
      ASSERT_EQ(store->Resume(10, kafka), 10);
      Append(*store, 20, now + 1000, now);
      ASSERT_TRUE(store->Sync().ok());
    }
    auto store = Open(now + 1600, later);
    EXPECT_TRUE(store->rebuilt()) << EncodeProgressMetadata(later);
    EXPECT_NE(store->store_id(), rebuilt_id);
    EXPECT_TRUE(store->log().Hours().empty());
  }
}

// The committed state names the new store and moves with deliveries.
TEST_F(PartitionStoreTest, CommittedProgressNamesTheStoreAndFollowsDeliveries) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  EXPECT_EQ(store->Resume(100, std::nullopt), 100);
  ASSERT_TRUE(Preload(*store, now / 1000 + 5).empty());
  const auto due = Append(*store, 100, now + 1000, now);
  ASSERT_TRUE(due.has_value());
  Append(*store, 101, now + 90'000, now);  // the next minute
  auto commit = store->TakeProgressToCommit(now, false);
  ASSERT_TRUE(commit.has_value());
  EXPECT_EQ(commit->offset, 100);
  auto metadata = ParseProgressMetadata(commit->metadata);
  ASSERT_TRUE(metadata.ok() && metadata->has_value());
  EXPECT_EQ((*metadata)->store_id, store->store_id());
  EXPECT_EQ((*metadata)->ingest_position, 102);
  EXPECT_FALSE(store->TakeProgressToCommit(now, false).has_value());  // nothing moved
  EXPECT_TRUE(store->Acknowledge(*due));
  Preload(*store, (now + 61'000) / 1000);
  commit = store->TakeProgressToCommit(now + 61'000, false);
  ASSERT_TRUE(commit.has_value());
  EXPECT_EQ(commit->offset, 101);  // offset 100's minute is wholly delivered
}

// The trap of rebuilding from Kafka: a backlog consumed after its due times is placed at the
// time it was stored, which a rebuild cannot know. A random mix of on-time and late records is
// ingested by one store and partly delivered (in position order, some acknowledgements still
// missing); a second store in another directory rebuilds from the committed progress. Every
// record the first one had not delivered must be stored again; what it delivered may come
// again only within the documented bound.
TEST_F(PartitionStoreTest, ARebuildFromTheCommittedProgressKeepsEveryUndeliveredRecord) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    testing::TempDir first_dir("rebuild_first");
    storage::StoreOptions options;
    auto first = OpenFirstStore(first_dir, false);
    ASSERT_TRUE(first);
    PartitionStore& a = *first;
    int64_t now = kHourStartMs;
    std::map<int64_t, int64_t> requested;      // offset -> requested time
    std::map<RecordPosition, int64_t> loaded;  // in the tracker, not acknowledged: -> offset
    std::set<int64_t> delivered;
    const int64_t kRecords = 3000;
    for (int64_t offset = 1000; offset < 1000 + kRecords; ++offset) {
      now += static_cast<int64_t>(rng() % 7);
      // A third overdue (a backlog read late), the rest due within 20 s.
      const int64_t asked = rng() % 3 == 0 ? now - static_cast<int64_t>(rng() % 60'000)
                                           : now + static_cast<int64_t>(rng() % 20'000);
      requested[offset] = asked;
      const DelayedRecord r = StoredRecordAt(offset, asked);
      auto appended = a.Append(EncodedRecord::Encode(r), now);
      ASSERT_TRUE(appended.ok());
      if (*appended) loaded[**appended] = offset;
      if (offset % 100 == 0) {
        // The preloader loads what came within reach; deliveries run 0-2 s behind the clock,
        // in position order, and a few acknowledgements are still missing.
        auto result = PreloadStore(
            a, UpTo(now / 1000 + 5),
            [&loaded](RecordPosition p, EncodedRecord&& d) { loaded[p] = d.source_offset(); },
            [](const std::string& what) { ADD_FAILURE() << what; });
        ASSERT_TRUE(result.ok());
        const int64_t delivered_until = now - static_cast<int64_t>(rng() % 2000);
        for (auto it = loaded.begin();
             it != loaded.end() && it->first.deliver_at_ms <= delivered_until;) {
          if (rng() % 50 == 0) {
            ++it;  // in flight
            continue;
          }
          ASSERT_TRUE(a.Acknowledge(it->first));
          delivered.insert(it->second);
          it = loaded.erase(it);
        }
      }
    }
    auto commit = a.TakeProgressToCommit(now, true);
    ASSERT_TRUE(commit.has_value());
    auto metadata = ParseProgressMetadata(commit->metadata);
    ASSERT_TRUE(metadata.ok() && metadata->has_value());

    testing::TempDir second_dir("rebuild_second");
    auto second = PartitionStore::Open(kStoredPartition, second_dir.path(), options, now + 10,
                                       *metadata, nullptr);
    ASSERT_TRUE(second.ok());
    PartitionStore& b = **second;
    EXPECT_TRUE(b.rebuilt());
    ASSERT_EQ(b.Resume(commit->offset, *metadata), commit->offset);
    size_t stored_again = 0;
    size_t duplicates = 0;
    for (int64_t offset = 1000; offset < 1000 + kRecords; ++offset) {
      const bool undelivered = !delivered.count(offset);
      if (offset < commit->offset) {
        ASSERT_FALSE(undelivered) << "offset " << offset << " below the low watermark "
                                  << commit->offset << " was never delivered";
        continue;
      }
      if (b.Finished(offset, requested[offset])) {
        ASSERT_FALSE(undelivered) << "offset " << offset << " skipped but never delivered";
        continue;
      }
      ++stored_again;
      if (!undelivered) ++duplicates;
    }
    // Delivered again: acknowledged after the checkpoint's minute began, or late and placed in
    // its second: a small share of the records.
    EXPECT_LT(duplicates, static_cast<size_t>(kRecords) / 10)
        << stored_again << " stored again, " << kRecords - delivered.size() << " undelivered";
  }
}

// Every record the commit's progress declares finished was delivered in a committed transaction
// (committed), and every such record is declared finished.
void ExpectExact(const CommittedOffset& commit, const std::map<int64_t, int64_t>& requested,
                 const std::set<int64_t>& committed) {
  auto metadata = ParseProgressMetadata(commit.metadata);
  ASSERT_TRUE(metadata.ok() && metadata->has_value());
  for (const auto& [offset, asked] : requested) {
    const bool delivered = committed.count(offset) > 0;
    if (offset < commit.offset) {
      ASSERT_TRUE(delivered) << "offset " << offset << " below the low watermark " << commit.offset
                             << " was never delivered";
    } else {
      ASSERT_EQ((*metadata)->Finished(offset, asked), delivered)
          << "offset " << offset << " asked for " << asked << ", checkpoint "
          << (*metadata)->checkpoint_ms << ", ingest position " << (*metadata)->ingest_position;
    }
  }
}

// exactly_once: transactions cut at random moments over a random mix of on-time records, records
// behind the committed checkpoint (delivered at once) and records some of whose deliveries are
// still on their way at a cut. Whatever committed last, a store rebuilt from it must skip
// exactly the records delivered in committed transactions: no duplicate and no loss. The open
// transaction's deliveries count as not delivered (a crash aborts them).
TEST_F(PartitionStoreTest, ExactlyOnceCommitsDescribeExactlyWhatCommittedTransactionsDelivered) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    testing::TempDir first_dir("exact_first");
    storage::StoreOptions options;
    auto first = OpenFirstStore(first_dir, /*exactly_once=*/true);
    ASSERT_TRUE(first);
    PartitionStore& a = *first;
    int64_t now = kHourStartMs;
    std::map<int64_t, int64_t> requested;      // offset -> requested time
    std::map<RecordPosition, int64_t> loaded;  // in the wheel, not produced: -> offset
    std::set<int64_t> behind;                  // delivered at once, not yet produced
    std::set<int64_t> in_transaction;          // produced in the open transaction
    std::set<int64_t> committed;               // produced in committed transactions
    std::optional<RecordPosition> last_produced;
    std::optional<CommittedOffset> last_commit;
    size_t cuts_put_off = 0;
    const int64_t kRecords = 3000;
    for (int64_t offset = 1000; offset < 1000 + kRecords; ++offset) {
      now += static_cast<int64_t>(rng() % 7);
      // A quarter overdue (a backlog read late), the rest due within 10 s.
      const int64_t asked = rng() % 4 == 0 ? now - static_cast<int64_t>(rng() % 30'000)
                                           : now + static_cast<int64_t>(rng() % 10'000);
      requested[offset] = asked;
      if (a.Behind(asked)) {
        a.offsets().AddDeadLettered(offset);
        a.progress().AddDeadLetter(offset);
        behind.insert(offset);
      } else {
        const DelayedRecord r = StoredRecordAt(offset, asked);
        auto appended = a.Append(EncodedRecord::Encode(r), now);
        ASSERT_TRUE(appended.ok());
        if (*appended) loaded[**appended] = offset;
      }
      if (offset % 37 != 0) continue;
      // The preloader loads what came within reach; the delivery thread produces what is due,
      // except (rarely) one that must wait (the producer's queue was full).
      auto result = PreloadStore(
          a, UpTo(now / 1000 + 5),
          [&loaded](RecordPosition p, EncodedRecord&& d) { loaded[p] = d.source_offset(); },
          [](const std::string& what) { ADD_FAILURE() << what; });
      ASSERT_TRUE(result.ok());
      const int64_t cut_ms = now;
      for (auto it = loaded.begin(); it != loaded.end() && it->first.deliver_at_ms <= cut_ms;) {
        if (rng() % 40 == 0) {
          ++it;  // produced at a later cut, after records placed behind it
          continue;
        }
        last_produced = std::max(last_produced.value_or(it->first), it->first);
        ASSERT_TRUE(a.Acknowledge(it->first));
        in_transaction.insert(it->second);
        it = loaded.erase(it);
      }
      for (auto it = behind.begin(); it != behind.end();) {
        if (rng() % 40 == 0) {
          ++it;  // not acknowledged yet
          continue;
        }
        a.progress().DeadLetterAcked(*it);
        a.offsets().MarkDeadLetterAcked(*it);
        in_transaction.insert(*it);
        it = behind.erase(it);
      }
      const auto checkpoint = a.TransactionCheckpoint(cut_ms, now, last_produced);
      if (!checkpoint) {
        ++cuts_put_off;
        continue;
      }
      EXPECT_EQ(checkpoint->ordinal, 0u);
      auto commit = a.TransactionProgress(*checkpoint, now, true);
      ASSERT_TRUE(commit.has_value());
      a.TransactionCommitted(*checkpoint);
      last_commit = commit;
      committed.insert(in_transaction.begin(), in_transaction.end());
      in_transaction.clear();
      last_produced.reset();
      // A crash may come right after any commit: each must be exact.
      ASSERT_NO_FATAL_FAILURE(ExpectExact(*commit, requested, committed));
    }
    ASSERT_TRUE(last_commit.has_value());
    EXPECT_GT(cuts_put_off, 0u) << "the test never exercised a cut that could not be exact";
    auto metadata = ParseProgressMetadata(last_commit->metadata);
    ASSERT_TRUE(metadata.ok() && metadata->has_value());
    EXPECT_EQ((*metadata)->late_below, (*metadata)->ingest_position);

    testing::TempDir second_dir("exact_second");
    auto second = PartitionStore::Open(kStoredPartition, second_dir.path(), options, now + 10,
                                       *metadata, nullptr, /*exactly_once=*/true);
    ASSERT_TRUE(second.ok());
    PartitionStore& b = **second;
    ASSERT_EQ(b.Resume(last_commit->offset, *metadata), last_commit->offset);
    for (int64_t offset = 1000; offset < 1000 + kRecords; ++offset) {
      const bool delivered = committed.count(offset) > 0;
      if (offset < last_commit->offset) {
        ASSERT_TRUE(delivered) << "offset " << offset << " below the low watermark "
                               << last_commit->offset << " was never delivered";
        continue;
      }
      ASSERT_EQ(b.Finished(offset, requested[offset]), delivered)
          << "offset " << offset << " asked for " << requested[offset] << ", checkpoint "
          << (*metadata)->checkpoint_ms << ", ingest position " << (*metadata)->ingest_position;
    }
  }
}

// exactly_once: a store left by a crash may hold records its marker does not cover; only a
// clean close lets it be reused.
TEST_F(PartitionStoreTest, ExactlyOnceReusesAStoreOnlyAfterACleanClose) {
  storage::StoreOptions options;
  const auto open = [&](const std::optional<ProgressMetadata>& kafka) {
    auto store = PartitionStore::Open(kStoredPartition, dir_.path(), options, kHourStartMs, kafka,
                                      nullptr, true);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(store).value();
  };
  std::string store_id;
  {
    auto store = open(std::nullopt);
    store_id = store->store_id();
    Append(*store, 7, kHourStartMs + 30'000, kHourStartMs);
    ASSERT_TRUE(store->Sync().ok());
    ASSERT_TRUE(store->MarkClosedCleanly().ok());
  }
  const ProgressMetadata kafka{store_id, kHourStartMs, 8, 8};
  {
    auto store = open(kafka);
    EXPECT_FALSE(store->rebuilt());
    EXPECT_EQ(store->log().Hours().size(), 1u);
    // No clean close this time (a crash).
  }
  auto store = open(kafka);
  EXPECT_TRUE(store->rebuilt());
  EXPECT_TRUE(store->log().Hours().empty());
  EXPECT_NE(store->store_id(), store_id);
}

// exactly_once: a store rebuilt from another store's progress takes every record asking for a
// time from that progress's checkpoint on, even one already due: delivering it at once, before
// the rebuild has re-read what the progress describes, would leave it out of every commit.
TEST_F(PartitionStoreTest, ExactlyOnceRebuildStartsAtTheCommittedCheckpoint) {
  storage::StoreOptions options;
  const int64_t now = kHourStartMs + 60'000;
  const ProgressMetadata kafka{"00000000000000aa", now - 20'000, 30, 30};
  auto store =
      PartitionStore::Open(kStoredPartition, dir_.path(), options, now, kafka, nullptr, true);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->start(), (RecordPosition{now - 20'000, 0}));
  EXPECT_FALSE((*store)->Behind(now - 10'000));  // stored, delivered once re-reading is done
  EXPECT_TRUE((*store)->Behind(now - 20'001));
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

// ---- cancels (x-delay-cancel) ----

StoredCancel CancelOf(int64_t target_offset, int64_t cancel_offset) {
  return StoredCancel{kStoredPartition.topic, kStoredPartition.partition, cancel_offset,
                      target_offset, kHourStartMs};
}

PartitionStore::CancelVerdict ApplyCancel(PartitionStore& store, int64_t target_offset,
                                          int64_t cancel_offset) {
  auto result = store.ApplyCancel(CancelOf(target_offset, cancel_offset));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return PartitionStore::CancelVerdict::kUnknown;
  EXPECT_TRUE(result->damage.empty());
  // Something to ask the delivery thread exactly when a copy is loaded.
  EXPECT_EQ(result->loaded_at_ms.has_value(),
            result->verdict == PartitionStore::CancelVerdict::kInMemory);
  return result->verdict;
}

TEST_F(PartitionStoreTest, ACancelledRecordIsNeverLoadedAndTheCancelSettlesWithItsSync) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  Append(*store, 10, now + 60'000, now);
  Append(*store, 11, now + 60'000, now);
  Append(*store, 12, now + 7'200'000, now);  // another hour
  Append(*store, 13, now + 61'000, now);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 14);
  EXPECT_EQ(ApplyCancel(*store, 11, 14), PartitionStore::CancelVerdict::kCancelled);
  EXPECT_EQ(ApplyCancel(*store, 12, 15), PartitionStore::CancelVerdict::kCancelled);
  // The cancels are in the store, not yet durable: their offsets wait, as a record's would.
  EXPECT_EQ(store->offsets().Committable(), 14);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 16);
  EXPECT_EQ(Preload(*store, (now + 7'200'000) / 1000 + 5), (std::vector<int64_t>{10, 13}));
  EXPECT_EQ(store->tracker().outstanding(), 2u);  // the watermark may pass what was cancelled
}

TEST_F(PartitionStoreTest, ACancelOfALoadedRecordIsLeftToTheDelivererAndKeptForARestart) {
  const int64_t now = kHourStartMs;
  {
    auto store = Open(now);
    ASSERT_TRUE(Preload(*store, now / 1000 + 5).empty());
    ASSERT_TRUE(Append(*store, 20, now + 2000, now).has_value());  // straight to the wheel
    Append(*store, 21, now + 2000, now);
    EXPECT_EQ(ApplyCancel(*store, 20, 22), PartitionStore::CancelVerdict::kInMemory);
    ASSERT_TRUE(store->Sync().ok());
    // A crash before the delivery thread dropped it, or before a checkpoint passed it.
  }
  auto store = Open(now + 100);
  EXPECT_EQ(Preload(*store, now / 1000 + 5), (std::vector<int64_t>{21}));
}

TEST_F(PartitionStoreTest, ACancelBehindTheWatermarkIsTooLateAndOfNoRecordUnknown) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  ASSERT_TRUE(Preload(*store, now / 1000 + 5).empty());
  const auto delivered = Append(*store, 30, now + 1000, now);
  ASSERT_TRUE(delivered.has_value());
  Append(*store, 31, now + 60'000, now);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 32);
  EXPECT_TRUE(store->tracker().Acknowledge(*delivered));
  ASSERT_TRUE(store->PersistCheckpoint(now + 3000).ok());  // the watermark passes offset 30
  EXPECT_EQ(ApplyCancel(*store, 30, 32), PartitionStore::CancelVerdict::kTooLate);
  EXPECT_EQ(ApplyCancel(*store, 29, 33), PartitionStore::CancelVerdict::kUnknown);
  EXPECT_EQ(ApplyCancel(*store, 31, 34), PartitionStore::CancelVerdict::kCancelled);
  // The cancel of a cancel: offset 34 holds a cancel, not a record.
  EXPECT_EQ(ApplyCancel(*store, 34, 35), PartitionStore::CancelVerdict::kUnknown);
  // Nothing was stored for 32, 33 and 35: settled at once; 34 waits for its sync.
  EXPECT_EQ(store->offsets().Committable(), 34);
  ASSERT_TRUE(store->Sync().ok());
  EXPECT_EQ(store->offsets().TakeCommittable(), 36);
}

// Many records over two hours, appended in offset order as a partition is read: every cancel
// finds its target by binary search, and exactly the cancelled ones are never loaded.
TEST_F(PartitionStoreTest, CancelsFindTheirTargetsAmongManyAndDropExactlyThem) {
  const int64_t now = kHourStartMs;
  auto store = Open(now);
  std::mt19937 random(11);
  int64_t offset = 0;
  std::set<int64_t> targets;
  std::vector<int64_t> expected;
  for (; offset < 3000; ++offset) {
    Append(*store, offset, now + 10'000 + random() % 7'000'000, now);
  }
  ASSERT_TRUE(store->Sync().ok());  // half of them synced, half only buffered
  for (; offset < 6000; ++offset) {
    Append(*store, offset, now + 10'000 + random() % 7'000'000, now);
  }
  for (int i = 0; i < 1000; ++i) targets.insert(random() % 6000);
  for (const int64_t target : targets) {
    ASSERT_EQ(ApplyCancel(*store, target, offset++), PartitionStore::CancelVerdict::kCancelled)
        << target;
  }
  std::vector<int64_t> loaded = Preload(*store, (now + 7'100'000) / 1000);
  std::sort(loaded.begin(), loaded.end());
  for (int64_t o = 0; o < 6000; ++o) {
    if (!targets.contains(o)) expected.push_back(o);
  }
  EXPECT_EQ(loaded, expected);
}

// Damage on the binary search's path: the hour is read second by second instead, so the target
// is still found (in its own intact chain) and cancelled.
TEST_F(PartitionStoreTest, DamageOnTheSearchPathStillFindsTheTarget) {
  const int64_t now = kHourStartMs;
  const int64_t first_ms = now + 60'000;
  {
    auto store = Open(now);
    for (int i = 0; i < 10; ++i) Append(*store, i, first_ms + i * 1000, now);
    ASSERT_TRUE(store->Sync().ok());
  }
  // The search probes the hour's last entry, then entry 4: break that one's checksum (the last
  // one is checked when the store is opened).
  const std::string index =
      dir_.path() + "/delayed-2/" + storage::HourName(now / 3'600'000) + ".idx";
  {
    std::fstream file(index, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(storage::IndexEntryOffset(4) + 28));
    file.write("\xff\xff\xff\xff", 4);
  }
  auto store = Open(now);
  auto result = store->ApplyCancel(CancelOf(3, 10));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->verdict, PartitionStore::CancelVerdict::kCancelled);
  ASSERT_EQ(result->damage.size(), 1u);
  EXPECT_NE(result->damage[0].find("entry 4"), std::string::npos) << result->damage[0];
  EXPECT_EQ(Preload(*store, (first_ms + 4000) / 1000), (std::vector<int64_t>{0, 1, 2}));
}

}  // namespace
}  // namespace delaybridge::plugin
