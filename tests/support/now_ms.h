// NowMs: the wall clock in Unix epoch milliseconds, the clock Kafka record timestamps and the
// bridge's delivery times use.
//
// Thread-safety: thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace delaybridge::testing {

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace delaybridge::testing
