#include "tools/load/lateness_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace delaybridge::load {

size_t LatenessHistogram::BucketOf(int64_t value_us) {
  const auto value = static_cast<uint64_t>(value_us);
  if (value < static_cast<uint64_t>(kSubBuckets)) return static_cast<size_t>(value);
  // shift leaves the top kSubBucketBits+1 bits: (value >> shift) is in [kSubBuckets,
  // 2*kSubBuckets).
  const int shift = std::bit_width(value) - (kSubBucketBits + 1);
  const uint64_t sub = (value >> shift) - kSubBuckets;
  return static_cast<size_t>(kSubBuckets + shift * kSubBuckets + sub);
}

int64_t LatenessHistogram::BucketUpperUs(size_t bucket) {
  if (bucket < static_cast<size_t>(kSubBuckets)) return static_cast<int64_t>(bucket);
  const size_t shift = (bucket - kSubBuckets) / kSubBuckets;
  const uint64_t sub = (bucket - kSubBuckets) % kSubBuckets;
  const uint64_t lower = (sub + kSubBuckets) << shift;
  return static_cast<int64_t>(lower + ((uint64_t{1} << shift) - 1));
}

void LatenessHistogram::Record(int64_t lateness_us) {
  if (count_ == 0) {
    min_us_ = max_us_ = lateness_us;
  } else {
    min_us_ = std::min(min_us_, lateness_us);
    max_us_ = std::max(max_us_, lateness_us);
  }
  ++count_;
  sum_us_ += static_cast<double>(lateness_us);
  if (lateness_us < 0) ++early_count_;
  ++buckets_[BucketOf(std::max<int64_t>(lateness_us, 0))];
}

int64_t LatenessHistogram::PercentileUs(double percentile) const {
  if (count_ == 0) return 0;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_))), 1, count_);
  int64_t seen = 0;
  for (size_t bucket = 0; bucket < kBucketCount; ++bucket) {
    seen += buckets_[bucket];
    if (seen >= rank) return std::min(BucketUpperUs(bucket), std::max<int64_t>(max_us_, 0));
  }
  return std::max<int64_t>(max_us_, 0);
}

}  // namespace delaybridge::load
