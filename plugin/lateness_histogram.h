// LatenessHistogram: how late deliveries were (produce time minus deliver-at, in ms), kept in
// log-linear buckets so memory stays fixed: values below 64 ms are exact, larger ones fall in
// buckets 1/32 of their power of two wide (under 3.2% error). Percentiles report the bucket's
// upper bound, so they never under-state lateness; max is exact.
//
// Thread-safety: none; the bridge's event-loop thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace delaybridge::plugin {

class LatenessHistogram {
 public:
  // lateness_ms < 0 (an early delivery) is counted separately and never hidden in a bucket.
  void Record(int64_t lateness_ms);

  uint64_t count() const { return count_; }
  uint64_t early_count() const { return early_count_; }
  int64_t max_ms() const { return max_ms_; }
  // The smallest bucket upper bound covering fraction q (0 < q <= 1) of the recorded values;
  // 0 when empty.
  int64_t PercentileMs(double q) const;

  // "count=N p50=Xms p99=Yms max=Zms early=E".
  std::string Summary() const;
  void Reset();

 private:
  static constexpr int kSubBucketBits = 5;                    // 32 sub-buckets per power of two
  static constexpr int kExactLimitBits = kSubBucketBits + 1;  // values < 64 are exact
  static constexpr int kBuckets =
      (1 << kExactLimitBits) + (63 - kExactLimitBits) * (1 << kSubBucketBits);
  static int BucketOf(int64_t value_ms);
  static int64_t UpperBoundOf(int bucket);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t early_count_ = 0;
  int64_t max_ms_ = 0;
};

}  // namespace delaybridge::plugin
