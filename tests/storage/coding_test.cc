#include "storage/coding.h"

#include <gtest/gtest.h>

#include "storage/crc32c.h"
#include "storage/format.h"
#include "storage/hour_files.h"

namespace delaybridge::storage {
namespace {

TEST(CodingTest, Fixed32IsLittleEndian) {
  std::string out;
  PutFixed32(&out, 0x04030201);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out, std::string("\x01\x02\x03\x04", 4));
  EXPECT_EQ(DecodeFixed32(out.data()), 0x04030201u);
}

TEST(CodingTest, Fixed64RoundTripsExtremes) {
  for (uint64_t value :
       {uint64_t{0}, uint64_t{1}, uint64_t{0x0102030405060708}, ~uint64_t{0}, uint64_t{1} << 63}) {
    std::string out;
    PutFixed64(&out, value);
    ASSERT_EQ(out.size(), 8u);
    EXPECT_EQ(DecodeFixed64(out.data()), value);
  }
  std::string out;
  PutFixed64(&out, 0x0807060504030201);
  EXPECT_EQ(out, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
}

TEST(CodingTest, NegativeTimesRoundTripThroughUnsigned) {
  char buf[8];
  EncodeFixed64(buf, static_cast<uint64_t>(int64_t{-5}));
  EXPECT_EQ(static_cast<int64_t>(DecodeFixed64(buf)), -5);
}

TEST(FormatTest, IndexEntryRoundTripsAndDetectsDamage) {
  IndexEntry entry{1795000000123, 4096, 100, 0xdeadbeef, 7};
  char bytes[kIndexEntrySize];
  EncodeIndexEntry(entry, bytes);
  IndexEntry decoded;
  ASSERT_TRUE(DecodeIndexEntry(bytes, &decoded));
  EXPECT_EQ(decoded.deliver_at_ms, entry.deliver_at_ms);
  EXPECT_EQ(decoded.log_offset, entry.log_offset);
  EXPECT_EQ(decoded.size, entry.size);
  EXPECT_EQ(decoded.record_crc, entry.record_crc);
  EXPECT_EQ(decoded.pre_index, entry.pre_index);
  bytes[17] ^= 0x10;
  EXPECT_FALSE(DecodeIndexEntry(bytes, &decoded));
}

TEST(FormatTest, FileHeaderChecksMagicHourAndVersion) {
  std::string header = EncodeFileHeader(kDataMagic, 42);
  ASSERT_EQ(header.size(), kFileHeaderSize);
  EXPECT_TRUE(CheckFileHeader(header, kDataMagic, 42, "f.log").ok());
  EXPECT_EQ(CheckFileHeader(header, kIndexMagic, 42, "f.log").code(), Status::Code::kCorruption);
  EXPECT_EQ(CheckFileHeader(header, kDataMagic, 43, "f.log").code(), Status::Code::kCorruption);
  EXPECT_EQ(CheckFileHeader(header.substr(0, 10), kDataMagic, 42, "f.log").code(),
            Status::Code::kCorruption);

  // A header written by a newer version, correctly signed: a clear "newer" message.
  EncodeFixed32(header.data() + 4, kFormatVersion + 1);
  EncodeFixed32(header.data() + 16, crc32c::Value(header.data(), 16));
  Status newer = CheckFileHeader(header, kDataMagic, 42, "f.log");
  EXPECT_EQ(newer.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(newer.message().find("newer"), std::string::npos) << newer.message();

  // The same header with a damaged byte fails its checksum instead.
  header[9] ^= 1;
  EXPECT_EQ(CheckFileHeader(header, kDataMagic, 42, "f.log").code(), Status::Code::kCorruption);
}

TEST(FormatTest, TimesFloorIntoHoursAndSeconds) {
  EXPECT_EQ(HourOfMs(0), 0);
  EXPECT_EQ(HourOfMs(kMsPerHour - 1), 0);
  EXPECT_EQ(HourOfMs(kMsPerHour), 1);
  EXPECT_EQ(SecondOfMs(1999), 1);
  EXPECT_EQ(SecondInHour(3600 * 5 + 17), 17u);
}

TEST(HourFilesTest, NamesAreUtcHoursAndParseBack) {
  // 2026-11-22T16:00:00Z = 1795363200 s.
  int64_t hour = 1795363200 / 3600;
  EXPECT_EQ(HourName(hour), "2026-11-22T16");
  EXPECT_EQ(ParseHourName("2026-11-22T16"), hour);
  EXPECT_EQ(HourName(0), "1970-01-01T00");
  EXPECT_EQ(HourName(HourOfMs(kMaxDeliverAtMs - 1)), "9999-12-31T23");
  for (int64_t h = 0; h < 24 * 366 * 3; h += 7) EXPECT_EQ(ParseHourName(HourName(h)), h);
  EXPECT_FALSE(ParseHourName("2026-02-30T01").has_value());
  EXPECT_FALSE(ParseHourName("2026-11-22T24").has_value());
  EXPECT_FALSE(ParseHourName("2026-11-22 16").has_value());
  EXPECT_FALSE(ParseHourName("CHECKPOINT").has_value());
}

}  // namespace
}  // namespace delaybridge::storage
