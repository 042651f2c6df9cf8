#include "tools/load/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace delaybridge::load {

TokenBucket::TokenBucket(double rate_per_s, int64_t burst, int64_t start_ns)
    : rate_per_ns_(rate_per_s / 1e9),
      burst_(static_cast<double>(std::max<int64_t>(burst, 1))),
      tokens_(0),
      last_refill_ns_(start_ns) {}

void TokenBucket::Refill(int64_t now_ns) {
  if (now_ns <= last_refill_ns_) return;
  tokens_ = std::min(burst_, tokens_ + (now_ns - last_refill_ns_) * rate_per_ns_);
  last_refill_ns_ = now_ns;
}

int64_t TokenBucket::Take(int64_t want, int64_t now_ns) {
  if (rate_per_ns_ == 0) return want;
  Refill(now_ns);
  const int64_t granted = std::min(want, static_cast<int64_t>(tokens_));
  tokens_ -= static_cast<double>(granted);
  return granted;
}

int64_t TokenBucket::NanosUntilNextToken(int64_t now_ns) {
  if (rate_per_ns_ == 0) return 0;
  Refill(now_ns);
  if (tokens_ >= 1) return 0;
  return static_cast<int64_t>(std::ceil((1 - tokens_) / rate_per_ns_));
}

}  // namespace delaybridge::load
