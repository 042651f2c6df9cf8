// LatenessHistogram: the distribution of "arrived minus meant-to-arrive" in microseconds,
// kept in log-linear buckets (128 per power of two, so any reported percentile is within
// 1/128 = 0.8% of the true value) instead of one sample per record: 10M records cost the
// same 60 KB as 10.
//
// Negative lateness is an EARLY delivery. Early samples are counted (early_count) and the
// earliest is kept exactly (min_us); for the percentiles they count as 0, because the
// question the percentiles answer is "how late", and early is reported on its own.
//
// Thread-safety: not thread-safe; one owner records, then reads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace delaybridge::load {

class LatenessHistogram {
 public:
  void Record(int64_t lateness_us);

  int64_t count() const { return count_; }
  int64_t early_count() const { return early_count_; }
  // Smallest and largest recorded values (exact); 0 when empty.
  int64_t min_us() const { return count_ ? min_us_ : 0; }
  int64_t max_us() const { return count_ ? max_us_ : 0; }
  double mean_us() const { return count_ ? sum_us_ / static_cast<double>(count_) : 0; }

  // The value at percentile p (0 < p <= 100): the upper edge of the bucket holding the sample of
  // rank ceil(p% of count), capped at max_us so that p100 is exact. 0 when empty.
  int64_t PercentileUs(double percentile) const;

 private:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per power of two: 0.8% error
  static constexpr int64_t kSubBuckets = int64_t{1} << kSubBucketBits;
  // Values below kSubBuckets get one bucket each; each further power of two up to 2^63 gets
  // kSubBuckets buckets.
  static constexpr size_t kBucketCount = kSubBuckets + (64 - kSubBucketBits) * kSubBuckets;

  static size_t BucketOf(int64_t value_us);
  static int64_t BucketUpperUs(size_t bucket);

  std::array<int64_t, kBucketCount> buckets_{};
  int64_t count_ = 0;
  int64_t early_count_ = 0;
  int64_t min_us_ = 0;
  int64_t max_us_ = 0;
  double sum_us_ = 0;  // double: a sum of int64 samples may overflow int64
};

}  // namespace delaybridge::load
