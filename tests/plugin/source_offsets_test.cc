// SourceOffsets: a commit never covers a record that is not durable or whose dead letter is
// not acknowledged.
#include "plugin/source_offsets.h"

#include <gtest/gtest.h>

namespace delaybridge::plugin {
namespace {

TEST(SourceOffsetsTest, NothingConsumedNothingToCommit) {
  SourceOffsets o;
  EXPECT_EQ(o.Committable(), std::nullopt);
  EXPECT_EQ(o.TakeCommittable(), std::nullopt);
}

TEST(SourceOffsetsTest, CommitsUpToTheFirstRecordNotDurable) {
  SourceOffsets o;
  o.AddStored(10, 1);
  o.AddStored(11, 2);
  o.AddStored(12, 3);
  EXPECT_EQ(o.Committable(), 10);  // resume at 10: nothing settled yet
  o.MarkDurable(2);
  EXPECT_EQ(o.TakeCommittable(), 12);
  EXPECT_EQ(o.TakeCommittable(), std::nullopt);  // unchanged since the last take
  o.MarkDurable(3);
  EXPECT_EQ(o.TakeCommittable(), 13);
  EXPECT_EQ(o.unsettled(), 0u);
}

TEST(SourceOffsetsTest, DeadLettersHoldTheCommitUntilAcknowledged) {
  SourceOffsets o;
  o.AddStored(5, 1);
  o.AddDeadLettered(6);
  o.AddStored(7, 2);
  o.MarkDurable(2);
  EXPECT_EQ(o.TakeCommittable(), 6);  // 6 is in flight to the dead-letter topic
  o.MarkDeadLetterAcked(6);
  EXPECT_EQ(o.TakeCommittable(), 8);
}

TEST(SourceOffsetsTest, GapsInOffsetsAreFine) {
  SourceOffsets o;
  o.AddStored(100, 1);
  o.AddDeadLettered(150);  // compaction or transaction markers skipped offsets
  o.MarkDeadLetterAcked(150);
  EXPECT_EQ(o.Committable(), 100);
  o.MarkDurable(1);
  EXPECT_EQ(o.Committable(), 151);
  o.MarkDeadLetterAcked(999);  // unknown offsets are ignored
  EXPECT_EQ(o.Committable(), 151);
}

TEST(SourceOffsetsTest, RemembersTheLastOffsetAdded) {
  SourceOffsets o;
  EXPECT_EQ(o.last_added(), std::nullopt);
  o.AddStored(4, 1);
  o.AddDeadLettered(5);
  EXPECT_EQ(o.last_added(), 5);
  o.AddSettled(6);
  EXPECT_EQ(o.last_added(), 6);
}

TEST(SourceOffsetsTest, AlreadyStoredRecordsSettleAtOnce) {
  SourceOffsets o;
  o.AddSettled(20);
  o.AddSettled(21);
  EXPECT_EQ(o.TakeCommittable(), 22);
  o.AddStored(22, 1);
  o.AddSettled(23);  // settled, but behind an unsettled record
  EXPECT_EQ(o.Committable(), 22);
  o.MarkDurable(1);
  EXPECT_EQ(o.Committable(), 24);
}

}  // namespace
}  // namespace delaybridge::plugin
