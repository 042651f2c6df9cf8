// SchedulerSlice: asks Linux to run a latency-critical thread in short slices. Since Linux 6.12
// the fair scheduler (EEVDF) takes a slice length per thread (sched_setattr's sched_runtime for
// SCHED_OTHER and SCHED_BATCH): a thread with a shorter slice gets an earlier virtual deadline,
// so when it wakes on a busy CPU it runs sooner, and is preempted sooner when it runs long. Its
// share of the CPU does not change (that is what its nice value decides). The bridge gives its
// delivery thread and its producer's broker threads such a slice: on two cores shared with the
// broker, the p99 wake-up delay of a thread woken every millisecond fell from 4-5 ms to 1-2 ms
// (docs/BENCHMARKS.md, "Short scheduler slices for the delivery path").
//
// Kernels before 6.12 accept the request and ignore it. No privilege is needed; a seccomp
// filter may still refuse the call, and the caller then carries on with the kernel's default.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace delaybridge::plugin {

// The range Linux clamps a requested slice to, in microseconds.
inline constexpr int64_t kMinSchedulerSliceUs = 100;
inline constexpr int64_t kMaxSchedulerSliceUs = 100'000;

// Sets the calling thread's slice to slice_us (within the range above), keeping its policy and
// nice value. A thread under a real-time or deadline policy is left as it is (Ok): an operator
// chose that. Errors name the failed call and errno.
Status RequestSchedulerSlice(int64_t slice_us);

// The slice of thread tid (0: the caller) in microseconds as the kernel reports it: the
// default slice (1,400 us on two CPUs) unless one was requested; 0 before Linux 6.12.
Result<int64_t> SchedulerSliceOfThread(int tid);

}  // namespace delaybridge::plugin
