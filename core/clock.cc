#include "core/clock.h"

#include <chrono>

namespace delaybridge {

int64_t SystemClock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace delaybridge
