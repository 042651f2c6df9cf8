// The Java murmur2 reference used by the partitioning checks matches Kafka's own test vectors
// (org.apache.kafka.common.utils.UtilsTest.testMurmur2).
#include "tests/support/murmur2.h"

#include <gtest/gtest.h>

namespace delaybridge::testing {
namespace {

TEST(JavaMurmur2Test, MatchesKafkaVectors) {
  EXPECT_EQ(JavaMurmur2("21"), -973932308);
  EXPECT_EQ(JavaMurmur2("foobar"), -790332482);
  EXPECT_EQ(JavaMurmur2("a-little-bit-long-string"), -985981536);
  EXPECT_EQ(JavaMurmur2("a-little-bit-longer-string"), -1486304829);
  EXPECT_EQ(JavaMurmur2("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"), -58897971);
  EXPECT_EQ(JavaMurmur2("abc"), 479470107);
}

TEST(JavaMurmur2Test, PartitionIsPositiveModulo) {
  EXPECT_EQ(JavaPartitionForKey("21", 7), (-973932308 & 0x7fffffff) % 7);
  for (int partitions = 1; partitions < 50; ++partitions) {
    const int32_t p = JavaPartitionForKey("foobar", partitions);
    EXPECT_GE(p, 0);
    EXPECT_LT(p, partitions);
  }
}

}  // namespace
}  // namespace delaybridge::testing
