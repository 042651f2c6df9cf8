#include "plugin/lateness_histogram.h"

#include <bit>

namespace delaybridge::plugin {

int LatenessHistogram::BucketOf(int64_t value_ms) {
  const uint64_t v = static_cast<uint64_t>(value_ms);
  if (v < (1u << kExactLimitBits)) return static_cast<int>(v);
  const int exponent = 63 - std::countl_zero(v);  // >= kExactLimitBits
  const int sub =
      static_cast<int>((v >> (exponent - kSubBucketBits)) & ((1 << kSubBucketBits) - 1));
  return (1 << kExactLimitBits) + (exponent - kExactLimitBits) * (1 << kSubBucketBits) + sub;
}

int64_t LatenessHistogram::UpperBoundOf(int bucket) {
  if (bucket < (1 << kExactLimitBits)) return bucket;
  const int rest = bucket - (1 << kExactLimitBits);
  const int exponent = rest / (1 << kSubBucketBits) + kExactLimitBits;
  const int sub = rest % (1 << kSubBucketBits);
  const uint64_t width = uint64_t{1} << (exponent - kSubBucketBits);
  const uint64_t lower = (uint64_t{1} << exponent) + static_cast<uint64_t>(sub) * width;
  return static_cast<int64_t>(lower + width - 1);
}

void LatenessHistogram::Record(int64_t lateness_ms) {
  ++count_;
  if (lateness_ms < 0) {
    ++early_count_;
    return;
  }
  ++buckets_[BucketOf(lateness_ms)];
  if (lateness_ms > max_ms_) max_ms_ = lateness_ms;
}

int64_t LatenessHistogram::PercentileMs(double q) const {
  const uint64_t on_time = count_ - early_count_;
  if (on_time == 0) return 0;
  uint64_t wanted = static_cast<uint64_t>(q * static_cast<double>(on_time) + 0.999999);
  if (wanted == 0) wanted = 1;
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= wanted) return std::min(UpperBoundOf(b), max_ms_);
  }
  return max_ms_;
}

std::string LatenessHistogram::Summary() const {
  return "count=" + std::to_string(count_) + " p50=" + std::to_string(PercentileMs(0.5)) +
         "ms p99=" + std::to_string(PercentileMs(0.99)) + "ms max=" + std::to_string(max_ms_) +
         "ms early=" + std::to_string(early_count_);
}

void LatenessHistogram::Reset() { *this = LatenessHistogram(); }

}  // namespace delaybridge::plugin
