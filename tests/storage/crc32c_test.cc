#include "storage/crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace delaybridge::storage {
namespace {

// Known answers from RFC 3720 (iSCSI), appendix B.4, and the classic check value.
TEST(Crc32cTest, MatchesPublishedVectors) {
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c::Value(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c::Value(ones.data(), ones.size()), 0x62A8AB43u);
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c::Value(ascending.data(), ascending.size()), 0x46DD794Eu);
  std::string descending(32, '\0');
  for (int i = 0; i < 32; ++i) descending[i] = static_cast<char>(31 - i);
  EXPECT_EQ(crc32c::Value(descending.data(), descending.size()), 0x113FDB5Cu);
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c::Value("", 0), 0u);
}

TEST(Crc32cTest, ExtendEqualsWholeValue) {
  std::string text = "hello delayed world, split at every point";
  uint32_t whole = crc32c::Value(text.data(), text.size());
  for (size_t split = 0; split <= text.size(); ++split) {
    uint32_t first = crc32c::Value(text.data(), split);
    EXPECT_EQ(crc32c::Extend(first, text.data() + split, text.size() - split), whole) << split;
  }
}

// Every length to 2,400 bytes: the hardware path takes blocks of three 256-byte lanes (768
// bytes), then of three 32-byte lanes (96 bytes), then words and a tail of up to 7 bytes, and
// each boundary between them falls in this range, with lengths on both sides.
#if defined(__x86_64__)
TEST(Crc32cTest, PortableAndHardwareAgreeAtEveryLength) {
  if (!crc32c::HardwareAccelerated()) GTEST_SKIP() << "no SSE4.2 and PCLMULQDQ on this CPU";
  const uint32_t seed = 20261129;
  std::mt19937 random(seed);
  std::string data(2400 + 8, '\0');
  for (char& c : data) c = static_cast<char>(random());
  for (size_t length = 0; length <= 2400; ++length) {
    const size_t start = length % 8;  // every alignment, in turn
    const uint32_t before = random();
    ASSERT_EQ(crc32c::ExtendPortable(before, data.data() + start, length),
              crc32c::ExtendHardware(before, data.data() + start, length))
        << "seed " << seed << " length " << length;
  }
}
#endif

TEST(Crc32cTest, PortableAndDispatchedAgreeOnRandomInput) {
  const uint32_t seed = 20261122;
  std::mt19937 random(seed);
  for (int round = 0; round < 200; ++round) {
    std::string data(random() % 30000, '\0');
    for (char& c : data) c = static_cast<char>(random());
    // Unaligned starts exercise the byte-wise head and tail of both implementations.
    size_t start = data.empty() ? 0 : random() % data.size();
    EXPECT_EQ(crc32c::ExtendPortable(7, data.data() + start, data.size() - start),
              crc32c::Extend(7, data.data() + start, data.size() - start))
        << "seed " << seed << " round " << round;
  }
}

TEST(Crc32cTest, FixedWidthValuesEqualTheirEncodedBytes) {
  const uint32_t seed = 20261129;
  std::mt19937_64 random(seed);
  for (int round = 0; round < 1000; ++round) {
    const auto before = static_cast<uint32_t>(random());
    const uint64_t value = random();
    char bytes[8];
    EncodeFixed64(bytes, value);
    ASSERT_EQ(crc32c::ExtendLittleEndian64(before, value), crc32c::ExtendPortable(before, bytes, 8))
        << "seed " << seed << " round " << round;
    EncodeFixed32(bytes, static_cast<uint32_t>(value));
    ASSERT_EQ(crc32c::ExtendLittleEndian32(before, static_cast<uint32_t>(value)),
              crc32c::ExtendPortable(before, bytes, 4))
        << "seed " << seed << " round " << round;
  }
}

TEST(Crc32cTest, DetectsSingleBitFlips) {
  std::string data(64, 'x');
  uint32_t original = crc32c::Value(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    std::string flipped = data;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_NE(crc32c::Value(flipped.data(), flipped.size()), original) << bit;
  }
}

}  // namespace
}  // namespace delaybridge::storage
