// EncodedRecord and DelayedRecordView: a record kept as its encoding reads back every field the
// decoder gives, headers in order with null values kept, and bytes that are not a valid encoding
// are refused when the record is made, not when it is produced.
#include "plugin/encoded_record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/plugin/stored_records.h"

namespace delaybridge::plugin {
namespace {

DelayedRecord Sample() { return RecordWithEveryFieldKind(); }

TEST(EncodedRecordTest, ReadsEveryFieldFromTheEncoding) {
  const DelayedRecord r = Sample();
  const EncodedRecord e = EncodedRecord::Encode(r);
  EXPECT_EQ(e.bytes(), EncodeDelayedRecord(r));
  EXPECT_EQ(e.requested_deliver_at_ms(), r.requested_deliver_at_ms);
  EXPECT_EQ(e.source_timestamp_ms(), r.source_timestamp_ms);
  EXPECT_EQ(e.source_offset(), r.source_offset);
  EXPECT_EQ(e.due_ms(), r.due_ms());
  EXPECT_EQ(e.SourceId(), r.SourceId());
  EXPECT_EQ(e.Decode(), r);

  const DelayedRecordView v = e.view();
  EXPECT_EQ(v.target_topic, "delivered");
  EXPECT_EQ(v.key, std::optional<std::string_view>(std::string_view("key\0with-nul", 12)));
  EXPECT_EQ(v.value, std::optional<std::string_view>(std::string(1000, 'v')));
  std::vector<KafkaHeader> headers;
  v.ForEachHeader([&headers](std::string_view name, const std::optional<std::string_view>& value) {
    headers.push_back(
        {std::string(name), value ? std::optional<std::string>(*value) : std::nullopt});
  });
  EXPECT_EQ(headers, r.headers);
}

TEST(EncodedRecordTest, ANullKeyAndANegativeTimestampReadBack) {
  DelayedRecord r = Sample();
  r.key = std::nullopt;
  r.source_timestamp_ms = -1;  // the source record had none
  const EncodedRecord e = EncodedRecord::Encode(r);
  EXPECT_EQ(e.source_timestamp_ms(), -1);
  EXPECT_FALSE(e.view().key.has_value());
  EXPECT_EQ(e.Decode(), r);
}

TEST(EncodedRecordTest, BytesAsStoredAreCheckedWhenTheRecordIsMade) {
  const std::string good = EncodeDelayedRecord(Sample());
  auto made = EncodedRecord::FromBytes(good);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->Decode(), Sample());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(EncodedRecord::FromBytes(good.substr(0, cut)).ok()) << cut;
  }
  EXPECT_FALSE(EncodedRecord::FromBytes(good + "x").ok());
  std::string other_version = good;
  other_version[0] = 7;
  EXPECT_FALSE(EncodedRecord::FromBytes(other_version).ok());
}

}  // namespace
}  // namespace delaybridge::plugin
