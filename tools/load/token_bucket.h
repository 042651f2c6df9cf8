// TokenBucket: paces delaybridge-load's producer at a target rate. Time is passed in by the
// caller (steady nanoseconds), so the pacing arithmetic is testable without sleeping.
//
// The bucket holds at most `burst` tokens; one token is one record. A rate of 0 means
// unlimited: Take grants everything asked.
//
// Thread-safety: not thread-safe; owned by the producing thread.
#pragma once

#include <cstdint>

namespace delaybridge::load {

class TokenBucket {
 public:
  // rate_per_s == 0: unlimited. burst: the most records granted at once after an idle spell;
  // small bursts keep the produced rate smooth at the scale of milliseconds.
  TokenBucket(double rate_per_s, int64_t burst, int64_t start_ns);

  // Grants up to `want` tokens available at now_ns and consumes them.
  int64_t Take(int64_t want, int64_t now_ns);

  // Nanoseconds from now_ns until one more token is available (0 when one is already there).
  int64_t NanosUntilNextToken(int64_t now_ns);

 private:
  void Refill(int64_t now_ns);

  double rate_per_ns_;
  double burst_;
  double tokens_;
  int64_t last_refill_ns_;
};

}  // namespace delaybridge::load
