// LatenessHistogram: exact below 64 ms, within 1/32 above, percentiles never under-state, and
// early deliveries are counted on their own.
#include "plugin/lateness_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace delaybridge::plugin {
namespace {

TEST(LatenessHistogramTest, EmptyReportsZero) {
  LatenessHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.PercentileMs(0.5), 0);
  EXPECT_EQ(h.Summary(), "count=0 p50=0ms p99=0ms max=0ms early=0");
}

TEST(LatenessHistogramTest, SmallValuesAreExact) {
  LatenessHistogram h;
  for (int v = 0; v < 50; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 50u);
  EXPECT_EQ(h.PercentileMs(0.5), 24);
  EXPECT_EQ(h.PercentileMs(1.0), 49);
  EXPECT_EQ(h.max_ms(), 49);
}

TEST(LatenessHistogramTest, PercentilesAreUpperBoundsWithinOneThirtySecond) {
  const uint32_t seed = 7;
  std::mt19937_64 rng(seed);
  std::vector<int64_t> values;
  LatenessHistogram h;
  for (int i = 0; i < 100'000; ++i) {
    const int64_t v = static_cast<int64_t>(rng() % (int64_t{1} << (rng() % 40)));
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
    const int64_t exact = values[static_cast<size_t>(q * values.size() + 0.999999) - 1];
    const int64_t reported = h.PercentileMs(q);
    EXPECT_GE(reported, exact) << "q=" << q << " seed=" << seed;
    EXPECT_LE(reported, exact + exact / 32 + 1) << "q=" << q << " seed=" << seed;
  }
  EXPECT_EQ(h.max_ms(), values.back());
}

TEST(LatenessHistogramTest, EarlyIsCountedSeparatelyAndResetClears) {
  LatenessHistogram h;
  h.Record(-3);
  h.Record(10);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.early_count(), 1u);
  EXPECT_EQ(h.PercentileMs(1.0), 10);
  EXPECT_EQ(h.Summary(), "count=2 p50=10ms p99=10ms max=10ms early=1");
  h.Reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.early_count(), 0u);
  h.Record(int64_t{1} << 62);  // the largest lateness anyone will see fits a bucket
  EXPECT_EQ(h.max_ms(), int64_t{1} << 62);
}

}  // namespace
}  // namespace delaybridge::plugin
