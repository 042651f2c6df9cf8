// PartitionRevoker on a real PartitionStore in a temporary directory, with fakes of the disk
// thread, the delivery thread, the consumer and the transaction cutter that record the order of
// calls: a revocation finishes the disk work, syncs the stores, (exactly_once: cuts a
// transaction,) releases the partitions, applies the acknowledgements, (at least once: marks and
// commits,) then checkpoints and closes; a partition lost under exactly_once is rolled back and
// nothing of it is committed.
#include "plugin/partition_revoker.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "plugin/offset_committer.h"
#include "plugin/source_offset_marker.h"
#include "plugin/store_identity.h"
#include "storage/delivery_checkpoint.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/recording_fakes.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

constexpr int kFlushTimeoutMs = 10'000;

class PartitionRevokerTest : public ::testing::Test {
 protected:
  // Opens the store, reading from offset 100, with records 100 (due in a second, so handed to
  // the delivery thread at once) and 101 (due in 90 s) appended and a group commit of them on
  // the disk thread, then record 102 appended and not synced. The delivery thread acknowledges
  // record 100.
  void OpenStoreWithWorkInFlight(bool exactly_once) {
    storage::StoreOptions options;
    auto store = PartitionStore::Open(kStoredPartition, dir_.path(), options, kHourStartMs, {},
                                      nullptr, exactly_once);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = store->get();
    dir_of_store_ = store_->dir();
    stores_[kStoredPartition] = std::move(store).value();
    ASSERT_EQ(store_->Resume(100, std::nullopt), 100);
    store_->set_preloaded_until_second(kHourStartMs / 1000 + 5);
    const std::optional<RecordPosition> due = Append(100, kHourStartMs + 1000);
    ASSERT_TRUE(due.has_value());
    Append(101, kHourStartMs + 90'000);
    committer_.GroupCommit();
    ASSERT_EQ(disk_.pending(), 1u);
    Append(102, kHourStartMs + 90'000);
    ASSERT_TRUE(store_->needs_sync());
    delivery_.acks.delivered.emplace_back(kStoredPartition, *due);
    delivery_.records_released = 1;
    clock_.advance_ms(2000);
  }

  std::optional<RecordPosition> Append(int64_t offset, int64_t deliver_at_ms) {
    const DelayedRecord r = StoredRecordAt(offset, deliver_at_ms);
    auto appended = store_->Append(EncodedRecord::Encode(r), clock_.now_ms());
    EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    return appended.ok() ? *appended : std::nullopt;
  }

  // For a fake's entry: whether every appended record was durable at that moment.
  std::string Synced() const {
    return store_->needs_sync() ? ": stores not synced" : ": stores synced";
  }

  std::string Marker() const {
    auto marker = SourceOffsetMarker::Open(dir_of_store_);
    if (!marker.ok() || !marker->recovered()) return "none";
    return std::to_string(*marker->recovered());
  }

  std::string Checkpoint() const {
    auto cp = storage::ReadDeliveryCheckpoint(dir_of_store_);
    if (!cp.ok() || !cp->has_value()) return "none";
    return std::to_string((*cp)->next_deliver_at_ms) + "/" + std::to_string((*cp)->next_ordinal);
  }

  PartitionRevoker MakeRevoker(RevokeTransactions* transactions) {
    return PartitionRevoker(
        stores_, disk_, delivery_, committer_, transactions,
        [this](const AckBatch& acks) {
          calls_.push_back("apply acks");
          for (const auto& [id, position] : acks.delivered) stores_.at(id)->Acknowledge(position);
        },
        log_.logger(), clock_, kFlushTimeoutMs);
  }

  testing::TempDir dir_{"partition_revoker_test"};
  ManualClock clock_{kHourStartMs};
  LogCapture log_{"partition_revoker_test_log"};
  WarningThrottle warnings_{log_.logger(), clock_};
  CallLog calls_;
  FakeDiskJobs disk_{calls_};
  FakeDelivery delivery_{calls_};
  FakeConsumer group_{calls_};
  FakeTransactions transactions_{calls_};
  PartitionStores stores_;
  PartitionStore* store_ = nullptr;
  std::string dir_of_store_;
  Status failed_;
  OffsetCommitter committer_{stores_,       disk_,     group_,
                             log_.logger(), warnings_, [this](const Status& s) { failed_ = s; }};
};

TEST_F(PartitionRevokerTest, AtLeastOnceSyncsReleasesAppliesAcksCommitsThenCheckpointsAndCloses) {
  OpenStoreWithWorkInFlight(false);
  delivery_.on_release = [this] { return Synced(); };
  std::string checkpoint_at_commit;
  group_.on_commit_sync = [this, &checkpoint_at_commit] {
    checkpoint_at_commit = Checkpoint();
    std::string entry = " marker=";
    entry += Marker();
    return entry;
  };
  MakeRevoker(nullptr).Revoke({kStoredPartition}, false);
  EXPECT_EQ(calls_, (CallLog{"disk finished", "release: stores synced", "take acks", "apply acks",
                             "commit sync marker=103"}));
  EXPECT_TRUE(failed_.ok()) << failed_.ToString();
  EXPECT_EQ(delivery_.released, std::vector<TopicPartitionId>{kStoredPartition});
  ASSERT_EQ(group_.sync_commits.size(), 1u);
  EXPECT_EQ(group_.sync_commits[0].count(kStoredPartition), 1u);
  // The checkpoint is written after the commit: record 100 acknowledged, the clock at +2 s.
  EXPECT_EQ(Checkpoint(), std::to_string(kHourStartMs + 2000) + "/0");
  EXPECT_NE(checkpoint_at_commit, Checkpoint());
  EXPECT_TRUE(stores_.empty());
  const std::string log = log_.Text();
  EXPECT_NE(log.find("revoked delayed-2: checkpoint=" + std::to_string(kHourStartMs + 2000)),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("released 1 records from memory"), std::string::npos) << log;
}

TEST_F(PartitionRevokerTest, ExactlyOnceCutsATransactionBeforeTheReleaseThenResumesAndClosesClean) {
  OpenStoreWithWorkInFlight(true);
  transactions_.on_cut = [this] { return Synced(); };
  MakeRevoker(&transactions_).Revoke({kStoredPartition}, false);
  EXPECT_EQ(calls_, (CallLog{"disk finished", "cut: stores synced", "release", "resume",
                             "take acks", "apply acks"}));
  EXPECT_TRUE(group_.sync_commits.empty());  // the transaction held the progress
  EXPECT_TRUE(group_.async_commits.empty());
  EXPECT_TRUE(stores_.empty());
  EXPECT_TRUE(std::filesystem::exists(dir_of_store_ + "/" + kClosedCleanlyFileName));
  EXPECT_EQ(Marker(), "103");
}

TEST_F(PartitionRevokerTest, ExactlyOnceAfterAFailedCutNeitherResumesNorClosesClean) {
  OpenStoreWithWorkInFlight(true);
  transactions_.cut_commits = false;
  MakeRevoker(&transactions_).Revoke({kStoredPartition}, false);
  EXPECT_EQ(calls_, (CallLog{"disk finished", "cut", "release", "take acks", "apply acks"}));
  EXPECT_TRUE(group_.sync_commits.empty());
  EXPECT_TRUE(stores_.empty());
  // Not reused when assigned again: rebuilt from the last committed transaction.
  EXPECT_FALSE(std::filesystem::exists(dir_of_store_ + "/" + kClosedCleanlyFileName));
}

TEST_F(PartitionRevokerTest, ALostPartitionUnderExactlyOnceIsRolledBackAndNothingCommits) {
  OpenStoreWithWorkInFlight(true);
  MakeRevoker(&transactions_).Revoke({kStoredPartition}, true);
  EXPECT_EQ(calls_, (CallLog{"roll back delayed-2"}));
  EXPECT_TRUE(group_.sync_commits.empty());
  EXPECT_TRUE(group_.async_commits.empty());
  EXPECT_TRUE(delivery_.released.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_of_store_ + "/" + kClosedCleanlyFileName));
}

TEST_F(PartitionRevokerTest, AfterAFailedTransactionARevocationCutsNothingAndClosesUnclean) {
  OpenStoreWithWorkInFlight(true);
  transactions_.failed = true;
  MakeRevoker(&transactions_).Revoke({kStoredPartition}, true);
  EXPECT_EQ(calls_, (CallLog{"disk finished", "release", "take acks", "apply acks"}));
  EXPECT_TRUE(group_.sync_commits.empty());
  EXPECT_TRUE(stores_.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_of_store_ + "/" + kClosedCleanlyFileName));
}

}  // namespace
}  // namespace delaybridge::plugin
