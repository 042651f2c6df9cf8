// ProgressMetadata: the text committed with each offset, and the rule a new owner skips by.
#include "plugin/progress_metadata.h"

#include <gtest/gtest.h>

namespace delaybridge::plugin {
namespace {

TEST(ProgressMetadataTest, RoundTrips) {
  const ProgressMetadata m{"0123456789abcdef", 1'800'000'000'123, 41, 57};
  const std::string text = EncodeProgressMetadata(m);
  EXPECT_EQ(text,
            "delaybridge/1 store=0123456789abcdef checkpoint_ms=1800000000123 late_below=41 "
            "ingest=57");
  EXPECT_LT(text.size(), 4096u);  // offset.metadata.max.bytes
  auto parsed = ParseProgressMetadata(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->has_value());
  EXPECT_EQ((*parsed)->store_id, m.store_id);
  EXPECT_EQ((*parsed)->checkpoint_ms, m.checkpoint_ms);
  EXPECT_EQ((*parsed)->late_below, m.late_below);
  EXPECT_EQ((*parsed)->ingest_position, m.ingest_position);
}

TEST(ProgressMetadataTest, NoMetadataIsNotAnError) {
  auto parsed = ParseProgressMetadata("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->has_value());
}

TEST(ProgressMetadataTest, ForeignOrDamagedTextIsRefused) {
  for (const char* text : {"hello", "delaybridge/2 store=a checkpoint_ms=1 late_below=1 ingest=1",
                           "delaybridge/1 store= checkpoint_ms=1 late_below=1 ingest=1",
                           "delaybridge/1 store=a checkpoint_ms=x late_below=1 ingest=1",
                           "delaybridge/1 store=a checkpoint_ms=1 late_below=-1 ingest=1",
                           "delaybridge/1 store=a checkpoint_ms=1 late_below=5 ingest=4",
                           "delaybridge/1 store=a checkpoint_ms=1 late_below=1 ingest=1 more"}) {
    EXPECT_FALSE(ParseProgressMetadata(text).ok()) << text;
  }
}

TEST(ProgressMetadataTest, FinishedOnlyBelowLateBelowAndBeforeTheCheckpoint) {
  const ProgressMetadata m{"a", 1000, 50, 60};
  EXPECT_TRUE(m.Finished(10, 999));
  EXPECT_FALSE(m.Finished(10, 1000));  // at the checkpoint: maybe not delivered
  EXPECT_FALSE(m.Finished(50, 1));     // at or above LL it may have been late
  EXPECT_FALSE(m.Finished(55, 1));
}

}  // namespace
}  // namespace delaybridge::plugin
