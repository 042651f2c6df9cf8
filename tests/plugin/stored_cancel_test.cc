// StoredCancel codec: every field round-trips, a payload's first byte tells a cancel from a
// delayed record, and damaged or truncated bytes are reported instead of crashing.
#include "plugin/stored_cancel.h"

#include <gtest/gtest.h>

#include "plugin/delayed_record.h"

namespace delaybridge::plugin {
namespace {

StoredCancel Sample() {
  return StoredCancel{"delayed", 7, 123'456'789'012, 123'456'789'000, 1'800'000'000'000};
}

TEST(StoredCancelTest, RoundTripsEveryFieldAndNamesBothRecords) {
  const StoredCancel cancel = Sample();
  auto decoded = DecodeStoredCancel(EncodeStoredCancel(cancel));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, cancel);
  EXPECT_EQ(cancel.SourceId(), "delayed/7/123456789012");
  EXPECT_EQ(cancel.TargetId(), "delayed/7/123456789000");
}

TEST(StoredCancelTest, TheFirstByteTellsTheKindOfPayload) {
  DelayedRecord record;
  record.source_topic = "delayed";
  EXPECT_EQ(KindOfStoredPayload(EncodeDelayedRecord(record)), StoredPayloadKind::kDelayedRecord);
  EXPECT_EQ(KindOfStoredPayload(EncodeStoredCancel(Sample())), StoredPayloadKind::kCancel);
  EXPECT_EQ(KindOfStoredPayload(""), StoredPayloadKind::kUnknown);
  EXPECT_EQ(KindOfStoredPayload("\x07rest"), StoredPayloadKind::kUnknown);
  // Each decoder refuses the other's payload.
  EXPECT_FALSE(DecodeDelayedRecord(EncodeStoredCancel(Sample())).ok());
  EXPECT_FALSE(DecodeStoredCancel(EncodeDelayedRecord(record)).ok());
}

// What the binary search for a cancel's target compares: the offset each payload was read at.
TEST(StoredCancelTest, ArrivalOffsetIsTheRecordsSourceOffsetOrTheCancelsOwn) {
  DelayedRecord record;
  record.source_topic = "delayed";
  record.source_offset = 987'654'321'000;
  record.value = std::string(5000, 'v');
  const std::string encoded = EncodeDelayedRecord(record);
  EXPECT_EQ(PeekSourceOffset(encoded), record.source_offset);
  EXPECT_EQ(ArrivalOffsetOf(encoded), record.source_offset);
  EXPECT_EQ(ArrivalOffsetOf(EncodeStoredCancel(Sample())), Sample().cancel_offset);
  EXPECT_EQ(PeekSourceOffset(EncodeStoredCancel(Sample())), std::nullopt);
  EXPECT_EQ(ArrivalOffsetOf(encoded.substr(0, 28)), std::nullopt);  // cut inside the field
  EXPECT_EQ(ArrivalOffsetOf(EncodeStoredCancel(Sample()).substr(0, 20)), std::nullopt);
  EXPECT_EQ(ArrivalOffsetOf(""), std::nullopt);
}

TEST(StoredCancelTest, EveryTruncationAndAWrongLengthAreCorruption) {
  const std::string bytes = EncodeStoredCancel(Sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto decoded = DecodeStoredCancel(bytes.substr(0, n));
    ASSERT_FALSE(decoded.ok()) << n;
    EXPECT_EQ(decoded.status().code(), Status::Code::kCorruption);
  }
  EXPECT_FALSE(DecodeStoredCancel(bytes + "x").ok());
}

TEST(StoredCancelTest, ATargetNotBeforeTheCancelIsCorruption) {
  StoredCancel cancel = Sample();
  cancel.target_offset = cancel.cancel_offset;
  auto decoded = DecodeStoredCancel(EncodeStoredCancel(cancel));
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("not below"), std::string::npos);
}

}  // namespace
}  // namespace delaybridge::plugin
