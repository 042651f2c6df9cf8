// Clock: where DelayBridge reads the time. Production uses SystemClock (Unix epoch
// milliseconds, because deliver-at headers are epoch milliseconds); tests use ManualClock so
// that time moves only when the test says so.
//
// Thread-safety: SystemClock is safe from any thread; ManualClock must be set and read from
// one thread (or externally synchronised).
#pragma once

#include <cstdint>

namespace delaybridge {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t now_ms() const override;
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms) : now_ms_(start_ms) {}
  int64_t now_ms() const override { return now_ms_; }
  void set_ms(int64_t now_ms) { now_ms_ = now_ms; }
  void advance_ms(int64_t delta_ms) { now_ms_ += delta_ms; }

 private:
  int64_t now_ms_;
};

}  // namespace delaybridge
