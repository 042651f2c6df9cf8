// LatenessHistogram: the distribution of "delivered minus due" in whatever unit the caller
// records (the bridge uses milliseconds, the load tool microseconds), kept in log-linear buckets
// (128 per power of two, so any reported percentile is within 1/128 = 0.8% above the true
// value) instead of one sample per record: 10M records cost the same 60 KB as 10.
//
// Negative lateness is an EARLY delivery. Early samples are counted (early_count) and the
// earliest is kept exactly (min); for the percentiles they count as 0, because the question
// the percentiles answer is "how late", and early is reported on its own.
//
// Thread-safety: none; one owner records, then reads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace delaybridge {

class LatenessHistogram {
 public:
  void Record(int64_t lateness);

  int64_t count() const { return count_; }
  int64_t early_count() const { return early_count_; }
  // Smallest and largest recorded values (exact); 0 when empty.
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }

  // The value at percentile p (0 < p <= 100): the upper edge of the bucket holding the sample
  // of rank ceil(p% of count), capped at max() so that p100 is exact; never under-states.
  // 0 when empty.
  int64_t Percentile(double percentile) const;

  // Samples known to be at most value: those whose bucket ends at or below it. A bucket that
  // straddles value counts above it, so a count never over-states how many were on time (by at
  // most the 0.8% bucket width). Early samples count as 0.
  int64_t CountAtMost(int64_t value) const;
  // The sum of every recorded value, early ones included.
  double sum() const { return sum_; }
  // The sum with early samples counted as 0, as the buckets count them: it never decreases, as
  // a Prometheus histogram's _sum must not.
  double sum_early_as_zero() const { return sum_early_as_zero_; }

  // Adds other's samples, as if each had been recorded here too.
  void Merge(const LatenessHistogram& other);

  void Reset() { *this = LatenessHistogram(); }

 private:
  static constexpr int kSubBucketBits = 7;  // 128 sub-buckets per power of two: 0.8% error
  static constexpr int64_t kSubBuckets = int64_t{1} << kSubBucketBits;
  // Values below kSubBuckets get one bucket each; each further power of two up to 2^63 gets
  // kSubBuckets buckets.
  static constexpr size_t kBucketCount = kSubBuckets + (64 - kSubBucketBits) * kSubBuckets;

  static size_t BucketOf(int64_t value);
  static int64_t BucketUpper(size_t bucket);

  std::array<int64_t, kBucketCount> buckets_{};
  int64_t count_ = 0;
  int64_t early_count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  double sum_ = 0;  // double: a sum of int64 samples may overflow int64
  double sum_early_as_zero_ = 0;
};

}  // namespace delaybridge
