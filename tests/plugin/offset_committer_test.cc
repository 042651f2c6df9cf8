// OffsetCommitter on a real PartitionStore in a temporary directory, with fakes of the disk
// thread and the consumer: a store's marker moves only once the fdatasync covering it finished,
// nothing is marked after a failed transaction, progress is committed only when it moved, and a
// revocation marks before it commits.
#include "plugin/offset_committer.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "plugin/source_offset_marker.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/recording_fakes.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

class OffsetCommitterTest : public ::testing::Test {
 protected:
  OffsetCommitterTest() {
    storage::StoreOptions options;
    auto store =
        PartitionStore::Open(kStoredPartition, dir_.path(), options, kHourStartMs, {}, nullptr);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = store->get();
    stores_[kStoredPartition] = std::move(store).value();
    EXPECT_EQ(store_->Resume(100, std::nullopt), 100);
    store_->set_preloaded_until_second(kHourStartMs / 1000 + 5);
  }

  void Append(int64_t offset, int64_t deliver_at_ms) {
    const DelayedRecord r = StoredRecordAt(offset, deliver_at_ms);
    auto appended = store_->Append(EncodedRecord::Encode(r), clock_.now_ms());
    ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  }

  // What a restart would read from the store's marker.
  std::optional<int64_t> Marker() const {
    auto marker = SourceOffsetMarker::Open(store_->dir());
    EXPECT_TRUE(marker.ok()) << marker.status().ToString();
    return marker.ok() ? marker->recovered() : std::nullopt;
  }

  // Whether a restart would skip the record at this source offset as stored.
  bool MarkerCovers(int64_t offset) const {
    const std::optional<int64_t> marker = Marker();
    return marker && *marker > offset;
  }

  testing::TempDir dir_{"offset_committer_test"};
  ManualClock clock_{kHourStartMs};
  LogCapture log_{"offset_committer_test_log"};
  WarningThrottle warnings_{log_.logger(), clock_};
  CallLog calls_;
  FakeDiskJobs disk_{calls_};
  FakeConsumer group_{calls_};
  PartitionStores stores_;
  PartitionStore* store_ = nullptr;
  Status failed_;
  OffsetCommitter committer_{stores_,       disk_,     group_,
                             log_.logger(), warnings_, [this](const Status& s) { failed_ = s; }};
};

TEST_F(OffsetCommitterTest, AMarkerMovesOnlyAfterTheFdatasyncCoveringItFinished) {
  Append(100, kHourStartMs + 1000);
  Append(101, kHourStartMs + 90'000);
  committer_.GroupCommit();
  ASSERT_EQ(disk_.pending(), 1u);  // the fdatasync runs on the disk thread
  committer_.GroupCommit();        // one at a time
  EXPECT_EQ(disk_.pending(), 1u);
  // Marking meanwhile (an acknowledged dead letter would) must not cover the records yet.
  committer_.MarkDurableOffsets();
  EXPECT_FALSE(MarkerCovers(100));
  disk_.RunAll();
  EXPECT_EQ(Marker(), 102);
  EXPECT_TRUE(failed_.ok()) << failed_.ToString();
  EXPECT_EQ(committer_.group_commit_us().count(), 1);
  // The next group commit has nothing to sync: no disk job.
  committer_.GroupCommit();
  EXPECT_EQ(disk_.pending(), 0u);
}

TEST_F(OffsetCommitterTest, NothingIsMarkedAfterATransactionFailed) {
  Append(100, kHourStartMs + 1000);
  committer_.GroupCommit();
  committer_.StopMarking();
  disk_.RunAll();
  EXPECT_FALSE(MarkerCovers(100));
  committer_.MarkDurableOffsets();
  EXPECT_FALSE(MarkerCovers(100));
}

TEST_F(OffsetCommitterTest, ProgressIsCommittedWithoutWaitingOnlyWhenItMoved) {
  Append(100, kHourStartMs + 1000);
  committer_.CommitProgress(clock_.now_ms());
  ASSERT_EQ(group_.async_commits.size(), 1u);
  ASSERT_EQ(group_.async_commits[0].count(kStoredPartition), 1u);
  EXPECT_EQ(group_.async_commits[0].at(kStoredPartition).offset, 100);
  committer_.CommitProgress(clock_.now_ms());
  ASSERT_EQ(group_.async_commits.size(), 2u);
  EXPECT_TRUE(group_.async_commits[1].empty());  // nothing moved
  EXPECT_TRUE(group_.sync_commits.empty());
}

TEST_F(OffsetCommitterTest, BeforeCloseTheMarkerIsWrittenThenTheProgressCommittedAndWaitedFor) {
  Append(100, kHourStartMs + 1000);
  ASSERT_TRUE(store_->Sync().ok());
  group_.on_commit_sync = [this] {
    const std::optional<int64_t> marker = Marker();
    return std::string(" marker=") + (marker ? std::to_string(*marker) : std::string("none"));
  };
  committer_.CommitBeforeClose({kStoredPartition}, clock_.now_ms());
  EXPECT_EQ(calls_, (CallLog{"commit sync marker=101"}));
  ASSERT_EQ(group_.sync_commits.size(), 1u);
  EXPECT_EQ(group_.sync_commits[0].count(kStoredPartition), 1u);  // forced, moved or not
}

}  // namespace
}  // namespace delaybridge::plugin
