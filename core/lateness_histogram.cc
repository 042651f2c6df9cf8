#include "core/lateness_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace delaybridge {

size_t LatenessHistogram::BucketOf(int64_t value) {
  const auto v = static_cast<uint64_t>(value);
  if (v < static_cast<uint64_t>(kSubBuckets)) return static_cast<size_t>(v);
  // shift leaves the top kSubBucketBits+1 bits: (v >> shift) is in [kSubBuckets, 2*kSubBuckets).
  const int shift = std::bit_width(v) - (kSubBucketBits + 1);
  const uint64_t sub = (v >> shift) - kSubBuckets;
  return static_cast<size_t>(kSubBuckets + shift * kSubBuckets + sub);
}

int64_t LatenessHistogram::BucketUpper(size_t bucket) {
  if (bucket < static_cast<size_t>(kSubBuckets)) return static_cast<int64_t>(bucket);
  const size_t shift = (bucket - kSubBuckets) / kSubBuckets;
  const uint64_t sub = (bucket - kSubBuckets) % kSubBuckets;
  const uint64_t lower = (sub + kSubBuckets) << shift;
  return static_cast<int64_t>(lower + ((uint64_t{1} << shift) - 1));
}

void LatenessHistogram::Record(int64_t lateness) {
  if (count_ == 0) {
    min_ = max_ = lateness;
  } else {
    min_ = std::min(min_, lateness);
    max_ = std::max(max_, lateness);
  }
  ++count_;
  sum_ += static_cast<double>(lateness);
  sum_early_as_zero_ += static_cast<double>(std::max<int64_t>(lateness, 0));
  if (lateness < 0) ++early_count_;
  ++buckets_[BucketOf(std::max<int64_t>(lateness, 0))];
}

int64_t LatenessHistogram::Percentile(double percentile) const {
  if (count_ == 0) return 0;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_))), 1, count_);
  const int64_t cap = std::max<int64_t>(max_, 0);
  int64_t seen = 0;
  for (size_t bucket = 0; bucket < kBucketCount; ++bucket) {
    seen += buckets_[bucket];
    if (seen >= rank) return std::min(BucketUpper(bucket), cap);
  }
  return cap;
}

int64_t LatenessHistogram::CountAtMost(int64_t value) const {
  if (value < 0) return 0;
  const size_t holding = BucketOf(value);
  const size_t end = BucketUpper(holding) == value ? holding + 1 : holding;
  int64_t total = 0;
  for (size_t bucket = 0; bucket < end; ++bucket) total += buckets_[bucket];
  return total;
}

void LatenessHistogram::Merge(const LatenessHistogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  early_count_ += other.early_count_;
  sum_ += other.sum_;
  sum_early_as_zero_ += other.sum_early_as_zero_;
  for (size_t bucket = 0; bucket < kBucketCount; ++bucket)
    buckets_[bucket] += other.buckets_[bucket];
}

}  // namespace delaybridge
