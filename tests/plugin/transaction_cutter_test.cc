// TransactionCutter on a real exactly_once PartitionStore in a temporary directory, with fakes of
// the disk thread, the delivery thread and the consumer that record the order of calls: a cut
// commits each partition's progress in the transaction and only then moves the checkpoint; a
// failed cut aborts, reloads the stores from the last committed transaction and moves reading
// back; a lost partition is rolled back and never committed; the cutter gives up when the
// producer cannot go on, or after kMaxRollbacks aborts that taught nothing, and nothing is marked
// after that.
#include "plugin/transaction_cutter.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "plugin/offset_committer.h"
#include "plugin/source_offset_marker.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/recording_fakes.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

constexpr int kFlushTimeoutMs = 10'000;
constexpr int kTransactionTimeoutMs = 60'000;

using CutResult = TransactionCutter::CutResult;

std::string Names(const std::vector<TopicPartitionId>& ids) {
  std::string names;
  for (const auto& id : ids) {
    names += " ";
    names += id.ToString();
  }
  return names;
}

class TransactionCutterTest : public ::testing::Test {
 protected:
  TransactionCutterTest() {
    OpenStore();
    // Record 100 is due in a second: loaded at once, produced later.
    const DelayedRecord r = StoredRecordAt(100, kHourStartMs + 1000);
    auto appended = store_->Append(EncodedRecord::Encode(r), clock_.now_ms());
    EXPECT_TRUE(appended.ok()) << appended.status().ToString();
    clock_.advance_ms(500);
    delivery_.cut_ms = clock_.now_ms();
  }

  void OpenStore() {
    storage::StoreOptions options;
    auto store =
        PartitionStore::Open(kStoredPartition, dir_.path(), options, clock_.now_ms(), {}, nullptr,
                             /*exactly_once=*/true);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = store->get();
    stores_[kStoredPartition] = std::move(store).value();
    ASSERT_EQ(store_->Resume(100, std::nullopt), 100);
    store_->set_preloaded_until_second(clock_.now_ms() / 1000 + 5);
  }

  TransactionCutter::Hooks Hooks() {
    TransactionCutter::Hooks hooks;
    hooks.apply_acks = [this](const AckBatch&) { calls_.push_back("apply acks"); };
    hooks.reopen_stores = [this](const std::vector<TopicPartitionId>& dropped,
                                 const std::vector<TopicPartitionId>& reload)
        -> Result<std::map<TopicPartitionId, int64_t>> {
      std::string entry = "reopen";
      entry += Names(reload);
      entry += " (dropped";
      entry += Names(dropped);
      entry += ")";
      calls_.push_back(entry);
      std::map<TopicPartitionId, int64_t> starts;
      for (const auto& id : reload) {
        OpenStore();
        starts[id] = 100;
      }
      return starts;
    };
    hooks.fail = [this](const Status& s) { failed_ = s; };
    return hooks;
  }

  std::string Log() const { return log_.Text(); }

  testing::TempDir dir_{"transaction_cutter_test"};
  ManualClock clock_{kHourStartMs};
  LogCapture log_{"transaction_cutter_test_log"};
  WarningThrottle warnings_{log_.logger(), clock_};
  CallLog calls_;
  FakeDiskJobs disk_{calls_};
  FakeDelivery delivery_{calls_};
  FakeConsumer consumer_{calls_};
  PartitionStores stores_;
  PartitionStore* store_ = nullptr;
  Status failed_;
  OffsetCommitter committer_{stores_,       disk_,     consumer_,
                             log_.logger(), warnings_, [this](const Status& s) { failed_ = s; }};
  TransactionCutter cutter_{
      stores_, disk_,         delivery_, consumer_,       committer_,
      Hooks(), log_.logger(), clock_,    kFlushTimeoutMs, kTransactionTimeoutMs};
};

TEST_F(TransactionCutterTest, ACutCommitsEachPartitionsProgressThenMovesItsCheckpoint) {
  delivery_.on_commit_transaction = [this] {
    std::string entry = " (checkpoint at ";
    entry += std::to_string(store_->tracker().floor_ms() - kHourStartMs);
    entry += ")";
    return entry;
  };
  EXPECT_EQ(cutter_.Cut(true, true), CutResult::kCommitted);
  EXPECT_EQ(calls_, (CallLog{"prepare commit", "apply acks",
                             "commit transaction delayed-2, resume (checkpoint at 0)",
                             "brokers answered"}));
  ASSERT_EQ(delivery_.committed_offsets.size(), 1u);
  EXPECT_EQ(delivery_.committed_offsets[0].at(kStoredPartition).offset,
            100);                                               // record 100 is not delivered
  EXPECT_EQ(store_->tracker().floor_ms(), kHourStartMs + 500);  // the committed checkpoint
  EXPECT_EQ(cutter_.transactions(), 1u);
  EXPECT_FALSE(cutter_.transaction_failed());
}

TEST_F(TransactionCutterTest, ARevocationsCutLeavesProductionStoppedUntilTheRelease) {
  EXPECT_TRUE(cutter_.CutBeforeRevoke());
  EXPECT_EQ(calls_, (CallLog{"prepare commit", "apply acks", "commit transaction delayed-2",
                             "brokers answered"}));
}

TEST_F(TransactionCutterTest, AFailedCommitAbortsAndReloadsFromTheLastCommittedTransaction) {
  ASSERT_EQ(store_->tracker().outstanding(), 1u);  // record 100, loaded
  delivery_.commit_status = Status::Unavailable("the coordinator moved");
  EXPECT_EQ(cutter_.Cut(false, true), CutResult::kRolledBack);
  EXPECT_EQ(calls_, (CallLog{"prepare commit", "apply acks", "commit transaction delayed-2, resume",
                             "abort transaction", "disk finished", "release",
                             "reopen delayed-2 (dropped delayed-2)", "seek delayed-2", "resume"}));
  EXPECT_EQ(delivery_.released, std::vector<TopicPartitionId>{kStoredPartition});
  // Reopened: nothing the aborted transaction acknowledged or loaded is kept.
  EXPECT_EQ(stores_.at(kStoredPartition)->tracker().outstanding(), 0u);
  EXPECT_EQ(cutter_.rollbacks(), 1u);
  EXPECT_EQ(cutter_.transactions(), 0u);
  EXPECT_TRUE(failed_.ok()) << failed_.ToString();
  EXPECT_NE(Log().find("transaction aborted: the coordinator moved; none of it is visible"),
            std::string::npos)
      << Log();
}

TEST_F(TransactionCutterTest, AFailedPrepareAbortsWithoutCommittingAnything) {
  delivery_.prepare_status = Status::Unavailable("a record of the transaction failed");
  EXPECT_EQ(cutter_.Cut(false, true), CutResult::kRolledBack);
  EXPECT_EQ(calls_, (CallLog{"prepare commit", "abort transaction", "disk finished", "release",
                             "reopen delayed-2 (dropped delayed-2)", "seek delayed-2", "resume"}));
  EXPECT_TRUE(delivery_.committed_offsets.empty());
}

TEST_F(TransactionCutterTest, ALostPartitionIsRolledBackNeverCommittedAndNotReopened) {
  cutter_.RollBackLost({kStoredPartition});
  EXPECT_EQ(calls_, (CallLog{"abort transaction", "disk finished", "release",
                             "reopen (dropped delayed-2)", "seek", "resume"}));
  EXPECT_TRUE(delivery_.committed_offsets.empty());
  EXPECT_TRUE(stores_.empty());
  EXPECT_NE(Log().find("transaction aborted: lost 1 partition(s)"), std::string::npos) << Log();
}

TEST_F(TransactionCutterTest, NotAMemberOfTheGroupCommitsNothingAndProducesAgain) {
  consumer_.member = false;
  EXPECT_EQ(cutter_.Cut(false, true), CutResult::kNotMember);
  EXPECT_EQ(calls_, (CallLog{"prepare commit", "apply acks", "resume"}));
  EXPECT_TRUE(delivery_.committed_offsets.empty());
}

TEST_F(TransactionCutterTest, AProducerThatCannotGoOnStopsTheBridgeAndNothingIsMarkedAfter) {
  ASSERT_TRUE(store_->Sync().ok());  // record 100 is durable: a marker could cover it
  delivery_.commit_status = Status::FailedPrecondition("fenced by a newer instance");
  EXPECT_EQ(cutter_.Cut(false, true), CutResult::kFailed);
  EXPECT_EQ(calls_,
            (CallLog{"prepare commit", "apply acks", "commit transaction delayed-2, resume"}));
  EXPECT_TRUE(cutter_.transaction_failed());
  EXPECT_EQ(failed_.message().rfind("transaction failed: fenced by a newer instance", 0), 0u)
      << failed_.ToString();
  committer_.MarkDurableOffsets();
  auto marker = SourceOffsetMarker::Open(store_->dir());
  ASSERT_TRUE(marker.ok());
  EXPECT_EQ(marker->recovered(), std::nullopt);
  EXPECT_FALSE(cutter_.CutBeforeRevoke());  // nothing more is tried
}

TEST_F(TransactionCutterTest, GivesUpAfterTwentyAbortsInARowThatTaughtNothing) {
  delivery_.commit_status = Status::Unavailable("the coordinator moved");
  for (int i = 0; i < TransactionCutter::kMaxRollbacks; ++i) {
    ASSERT_EQ(cutter_.Cut(false, true), CutResult::kRolledBack) << i;
  }
  EXPECT_EQ(cutter_.Cut(false, true), CutResult::kFailed);
  EXPECT_TRUE(cutter_.transaction_failed());
  EXPECT_FALSE(failed_.ok());
}

TEST_F(TransactionCutterTest, AbortsThatTaughtARefusalDoNotCountTowardsGivingUp) {
  delivery_.commit_status = Status::Unavailable("a record was refused");
  delivery_.abort_result.learnt_refusal = true;
  for (int i = 0; i < 2 * TransactionCutter::kMaxRollbacks; ++i) {
    ASSERT_EQ(cutter_.Cut(false, true), CutResult::kRolledBack) << i;
  }
  EXPECT_FALSE(cutter_.transaction_failed());
}

}  // namespace
}  // namespace delaybridge::plugin
