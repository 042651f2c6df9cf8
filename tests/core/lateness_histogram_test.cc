// LatenessHistogram: exact small values, percentiles within 0.8% above the truth, early
// deliveries kept apart, no overflow at the top of the range.
#include "core/lateness_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace delaybridge {
namespace {

TEST(LatenessHistogramTest, EmptyReportsZeros) {
  LatenessHistogram histogram;
  EXPECT_EQ(histogram.count(), 0);
  EXPECT_EQ(histogram.Percentile(99), 0);
  EXPECT_EQ(histogram.max(), 0);
  EXPECT_EQ(histogram.min(), 0);
}

TEST(LatenessHistogramTest, SmallValuesAreExact) {
  LatenessHistogram histogram;
  for (int64_t us = 1; us <= 100; ++us) histogram.Record(us);
  EXPECT_EQ(histogram.Percentile(50), 50);
  EXPECT_EQ(histogram.Percentile(99), 99);
  EXPECT_EQ(histogram.Percentile(100), 100);
  EXPECT_DOUBLE_EQ(histogram.mean(), 50.5);
}

TEST(LatenessHistogramTest, PercentilesWithinOnePercentOfSorted) {
  constexpr uint64_t kSeed = 7;
  std::mt19937_64 engine(kSeed);
  std::lognormal_distribution<double> lateness(8.0, 2.0);  // ~3 ms median, long tail
  std::vector<int64_t> samples;
  LatenessHistogram histogram;
  for (int i = 0; i < 100'000; ++i) {
    const auto us = static_cast<int64_t>(lateness(engine));
    samples.push_back(us);
    histogram.Record(us);
  }
  std::sort(samples.begin(), samples.end());
  for (double percentile : {50.0, 90.0, 99.0, 99.9}) {
    const auto rank = static_cast<size_t>(std::ceil(percentile / 100 * samples.size()));
    const int64_t exact = samples[rank - 1];
    const int64_t reported = histogram.Percentile(percentile);
    EXPECT_GE(reported, exact) << "p" << percentile << " seed " << kSeed;
    EXPECT_LE(reported, exact + exact / 100 + 1) << "p" << percentile << " seed " << kSeed;
  }
  EXPECT_EQ(histogram.Percentile(100), samples.back());
  EXPECT_EQ(histogram.max(), samples.back());
}

TEST(LatenessHistogramTest, EarlySamplesAreCountedAndKeptApart) {
  LatenessHistogram histogram;
  histogram.Record(-1'500);
  histogram.Record(-1);
  histogram.Record(2'000);
  histogram.Record(0);
  EXPECT_EQ(histogram.count(), 4);
  EXPECT_EQ(histogram.early_count(), 2);
  EXPECT_EQ(histogram.min(), -1'500);
  EXPECT_EQ(histogram.Percentile(50), 0) << "early samples count as on time in percentiles";
  EXPECT_EQ(histogram.Percentile(100), 2'000);
}

TEST(LatenessHistogramTest, HugeValuesDoNotOverflow) {
  LatenessHistogram histogram;
  const int64_t thirty_days_us = int64_t{30} * 86'400 * 1'000'000;
  histogram.Record(thirty_days_us);
  histogram.Record(INT64_MAX);
  EXPECT_EQ(histogram.Percentile(100), INT64_MAX);
  const int64_t p50 = histogram.Percentile(50);
  EXPECT_GE(p50, thirty_days_us);
  EXPECT_LE(p50, thirty_days_us + thirty_days_us / 100);
}

TEST(LatenessHistogramTest, ResetForgetsEverything) {
  LatenessHistogram histogram;
  histogram.Record(-5);
  histogram.Record(70);
  histogram.Reset();
  EXPECT_EQ(histogram.count(), 0);
  EXPECT_EQ(histogram.early_count(), 0);
  EXPECT_EQ(histogram.Percentile(100), 0);
  histogram.Record(3);
  EXPECT_EQ(histogram.min(), 3);
  EXPECT_EQ(histogram.Percentile(50), 3);
}

TEST(LatenessHistogramTest, CountAtMostCountsWholeBucketsOnly) {
  LatenessHistogram h;
  for (int64_t v : {-5, 0, 3, 127, 128, 1000, 1001, 5000}) h.Record(v);
  EXPECT_EQ(h.CountAtMost(-1), 0);
  EXPECT_EQ(h.CountAtMost(0), 2);  // the early sample counts as 0
  EXPECT_EQ(h.CountAtMost(3), 3);
  EXPECT_EQ(h.CountAtMost(127), 4);
  EXPECT_EQ(h.CountAtMost(128), 5);
  // 1000 and 1001 share a bucket of width 4 ending at 1003: neither is counted at 1000.
  EXPECT_EQ(h.CountAtMost(1000), 5);
  EXPECT_EQ(h.CountAtMost(1003), 7);
  EXPECT_EQ(h.CountAtMost(int64_t{1} << 40), 8);
  EXPECT_EQ(h.sum(), 7254);
  EXPECT_EQ(h.sum_early_as_zero(), 7259);
}

TEST(LatenessHistogramTest, MergeIsRecordingBoth) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> value(-100, 1'000'000);
  LatenessHistogram a, b, both;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t v = value(rng);
    (i % 3 == 0 ? a : b).Record(v);
    both.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), both.count());
  EXPECT_EQ(a.early_count(), both.early_count());
  EXPECT_EQ(a.min(), both.min());
  EXPECT_EQ(a.max(), both.max());
  EXPECT_DOUBLE_EQ(a.sum(), both.sum());
  EXPECT_DOUBLE_EQ(a.sum_early_as_zero(), both.sum_early_as_zero());
  for (double p : {1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(a.Percentile(p), both.Percentile(p)) << p;
  for (int64_t v : {0, 10, 1000, 123'456}) EXPECT_EQ(a.CountAtMost(v), both.CountAtMost(v)) << v;
  LatenessHistogram empty;
  empty.Merge(both);
  EXPECT_EQ(empty.min(), both.min());
  EXPECT_EQ(empty.count(), both.count());
}

}  // namespace
}  // namespace delaybridge
