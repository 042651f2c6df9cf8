// PartitionAssigner on real PartitionStores in a temporary directory, with a fake consumer that
// answers the committed offsets, watermarks and positions the test sets: a new store delivers
// only once reading reached the partition's end as of its assignment (or its committed ingest
// position when the end is unknown), exactly_once never guesses the committed progress, and a
// store that cannot be opened is an error that leaves the others open.
#include "plugin/partition_assigner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/clock.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/recording_fakes.h"
#include "tests/plugin/stored_records.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

const TopicPartitionId kOther{"delayed", 3};

class PartitionAssignerTest : public ::testing::Test {
 protected:
  PartitionAssigner MakeAssigner(bool exactly_once = false) {
    PartitionAssigner::Settings settings;
    settings.storage_dir = dir_.path();
    settings.exactly_once = exactly_once;
    settings.transaction_timeout_ms = 1'000;
    settings.preload_seconds = 5;
    return PartitionAssigner(std::move(settings), stores_, consumer_, log_.logger(), clock_);
  }
  PartitionStore& Store(const TopicPartitionId& id) { return *stores_.at(id); }

  testing::TempDir dir_{"partition_assigner_test"};
  ManualClock clock_{kHourStartMs};
  LogCapture log_{"partition_assigner_test_log"};
  CallLog calls_;
  FakeConsumer consumer_{calls_};
  PartitionStores stores_;
};

TEST_F(PartitionAssignerTest, ANewStoreDeliversOnceReadingReachedThePartitionsEndAtAssignment) {
  consumer_.watermarks[kStoredPartition] = {0, 50};
  PartitionAssigner assigner = MakeAssigner();
  auto starts = assigner.Open({kStoredPartition});
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  EXPECT_EQ(Store(kStoredPartition).deliveries_held_until(), 50);
  EXPECT_FALSE(Store(kStoredPartition).delivers());

  consumer_.positions[kStoredPartition] = 49;
  assigner.ReleaseDeliveriesWhenReadToTheEnd(Store(kStoredPartition), false);
  EXPECT_FALSE(Store(kStoredPartition).delivers()) << "a cancel at offset 49 is not read yet";
  consumer_.positions[kStoredPartition] = 50;
  assigner.ReleaseDeliveriesWhenReadToTheEnd(Store(kStoredPartition), false);
  EXPECT_TRUE(Store(kStoredPartition).delivers());
  EXPECT_NE(log_.Text().find("reading reached offset 50: delivering"), std::string::npos)
      << log_.Text();
}

TEST_F(PartitionAssignerTest, WhileReadingIsPausedByAStoreThatTakesNoRecordsItDeliversAnyway) {
  consumer_.watermarks[kStoredPartition] = {0, 50};
  PartitionAssigner assigner = MakeAssigner();
  ASSERT_TRUE(assigner.Open({kStoredPartition}).ok());
  assigner.ReleaseDeliveriesWhenReadToTheEnd(Store(kStoredPartition), true);
  EXPECT_TRUE(Store(kStoredPartition).delivers());
  EXPECT_NE(log_.Text().find("reading paused by a store that takes no records"), std::string::npos)
      << log_.Text();
}

TEST_F(PartitionAssignerTest, AnEmptyPartitionDeliversAtOnce) {
  consumer_.watermarks[kStoredPartition] = {20, 20};
  PartitionAssigner assigner = MakeAssigner();
  ASSERT_TRUE(assigner.Open({kStoredPartition}).ok());
  EXPECT_TRUE(Store(kStoredPartition).delivers());
}

TEST_F(PartitionAssignerTest, WithoutThePartitionsEndDeliveriesWaitForTheCommittedIngestPosition) {
  ProgressMetadata progress;
  progress.store_id = "another-store";
  progress.checkpoint_ms = kHourStartMs;
  progress.late_below = 10;
  progress.ingest_position = 30;
  consumer_.committed[kStoredPartition] = CommittedOffset{10, EncodeProgressMetadata(progress)};
  PartitionAssigner assigner = MakeAssigner();
  auto starts = assigner.Open({kStoredPartition});
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  EXPECT_EQ(starts->at(kStoredPartition), 10);
  EXPECT_EQ(Store(kStoredPartition).deliveries_held_until(), 30);
  EXPECT_TRUE(Store(kStoredPartition).rebuilt()) << "the progress came from another store";
}

TEST_F(PartitionAssignerTest, WithoutThePartitionsEndOrProgressDeliveriesStartAtOnce) {
  PartitionAssigner assigner = MakeAssigner();
  ASSERT_TRUE(assigner.Open({kStoredPartition}).ok());
  EXPECT_TRUE(Store(kStoredPartition).delivers());
  EXPECT_NE(log_.Text().find("deliveries start at once"), std::string::npos) << log_.Text();
}

TEST_F(PartitionAssignerTest, MetadataThatIsNotOursIsAnOffsetWithoutProgress) {
  consumer_.watermarks[kStoredPartition] = {0, 0};
  consumer_.committed[kStoredPartition] = CommittedOffset{7, "written by another tool"};
  PartitionAssigner assigner = MakeAssigner();
  auto starts = assigner.Open({kStoredPartition});
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  EXPECT_EQ(starts->at(kStoredPartition), 7);
  EXPECT_NE(log_.Text().find("treated as an offset without progress"), std::string::npos)
      << log_.Text();
}

TEST_F(PartitionAssignerTest, ExactlyOnceNeverGuessesTheCommittedProgress) {
  consumer_.committed_status = Status::Unavailable("the coordinator did not answer");
  PartitionAssigner assigner = MakeAssigner(true);
  auto starts = assigner.Open({kStoredPartition});
  ASSERT_FALSE(starts.ok());
  EXPECT_NE(starts.status().ToString().find("exactly_once needs the committed progress"),
            std::string::npos)
      << starts.status().ToString();
  EXPECT_TRUE(stores_.empty());
}

TEST_F(PartitionAssignerTest, AtLeastOnceTrustsTheLocalStoreWhenTheCommitCannotBeRead) {
  consumer_.committed_status = Status::Unavailable("the coordinator did not answer");
  consumer_.watermarks[kStoredPartition] = {0, 0};
  PartitionAssigner assigner = MakeAssigner();
  ASSERT_TRUE(assigner.Open({kStoredPartition}).ok());
  EXPECT_EQ(stores_.count(kStoredPartition), 1u);
}

TEST_F(PartitionAssignerTest, AStoreThatCannotBeOpenedIsAnErrorAndTheOnesBeforeItStay) {
  // A file where the second store's directory would be.
  std::ofstream(dir_.File(kOther.ToString())) << "not a directory";
  consumer_.watermarks[kStoredPartition] = {0, 0};
  consumer_.watermarks[kOther] = {0, 0};
  PartitionAssigner assigner = MakeAssigner();
  auto starts = assigner.Open({kStoredPartition, kOther});
  ASSERT_FALSE(starts.ok());
  EXPECT_NE(starts.status().ToString().find("assign " + kOther.ToString()), std::string::npos)
      << starts.status().ToString();
  EXPECT_EQ(stores_.count(kStoredPartition), 1u);
  EXPECT_EQ(stores_.count(kOther), 0u);
}

}  // namespace
}  // namespace delaybridge::plugin
