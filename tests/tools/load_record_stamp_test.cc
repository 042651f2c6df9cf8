#include <gtest/gtest.h>

#include <vector>

#include "tools/load/record_stamp.h"

namespace delaybridge::load {
namespace {

TEST(RecordStamp, RoundTripsThroughAValue) {
  std::vector<std::byte> value(100, std::byte{'x'});
  const RecordStamp stamp{0xfedcba9876543210, kWarmupIdBit | 7, 1'795'000'000'123};
  EncodeRecordStamp(stamp, value);
  std::optional<RecordStamp> decoded = DecodeRecordStamp(value);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->run_id, stamp.run_id);
  EXPECT_EQ(decoded->record_id, stamp.record_id);
  EXPECT_EQ(decoded->deliver_at_ms, stamp.deliver_at_ms);
  EXPECT_EQ(value[kRecordStampBytes], std::byte{'x'}) << "filler after the stamp is untouched";
}

TEST(RecordStamp, ForeignValuesAreNotStamps) {
  std::vector<std::byte> short_value(kRecordStampBytes - 1, std::byte{0});
  EXPECT_FALSE(DecodeRecordStamp(short_value).has_value());
  std::vector<std::byte> other(64, std::byte{'D'});
  EXPECT_FALSE(DecodeRecordStamp(other).has_value());
  EXPECT_FALSE(DecodeRecordStamp({}).has_value());
}

}  // namespace
}  // namespace delaybridge::load
