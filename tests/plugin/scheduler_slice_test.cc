// RequestSchedulerSlice: the calling thread gets the slice, keeps its nice value, and an
// out-of-range slice is refused without a change. Each case runs on a thread of its own, so
// that the test runner's thread keeps the kernel's defaults.
#include "plugin/scheduler_slice.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>
#include <thread>

namespace delaybridge::plugin {
namespace {

void OnOwnThread(const std::function<void()>& body) { std::thread(body).join(); }

// Kernels before 6.12 report no slice (and ignore a requested one).
bool KernelHasPerThreadSlices() {
  Result<int64_t> slice = SchedulerSliceOfThread(0);
  return slice.ok() && *slice > 0;
}

TEST(SchedulerSliceTest, TheCallingThreadGetsTheSlice) {
  if (!KernelHasPerThreadSlices()) GTEST_SKIP() << "this kernel has no per-thread slices";
  OnOwnThread([] {
    ASSERT_TRUE(RequestSchedulerSlice(250).ok());
    EXPECT_EQ(SchedulerSliceOfThread(0).value(), 250);
    const int tid = static_cast<int>(syscall(SYS_gettid));
    EXPECT_EQ(SchedulerSliceOfThread(tid).value(), 250);
  });
}

TEST(SchedulerSliceTest, KeepsTheThreadsNiceValue) {
  if (!KernelHasPerThreadSlices()) GTEST_SKIP() << "this kernel has no per-thread slices";
  OnOwnThread([] {
    const int tid = static_cast<int>(syscall(SYS_gettid));
    ASSERT_EQ(setpriority(PRIO_PROCESS, tid, 7), 0);
    ASSERT_TRUE(RequestSchedulerSlice(500).ok());
    errno = 0;
    EXPECT_EQ(getpriority(PRIO_PROCESS, tid), 7);
    EXPECT_EQ(errno, 0);
    EXPECT_EQ(SchedulerSliceOfThread(0).value(), 500);
  });
}

TEST(SchedulerSliceTest, RefusesASliceOutsideTheKernelsRangeAndChangesNothing) {
  OnOwnThread([] {
    const int64_t before = SchedulerSliceOfThread(0).value();
    for (int64_t slice_us : {int64_t{0}, kMinSchedulerSliceUs - 1, kMaxSchedulerSliceUs + 1}) {
      Status s = RequestSchedulerSlice(slice_us);
      EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << slice_us;
      EXPECT_NE(s.message().find(std::to_string(slice_us) + " us is outside [100, 100000]"),
                std::string::npos)
          << s.message();
    }
    EXPECT_EQ(SchedulerSliceOfThread(0).value(), before);
  });
}

TEST(SchedulerSliceTest, AnUnknownThreadIsAnErrorWithTheCallsName) {
  Result<int64_t> slice = SchedulerSliceOfThread(-1);
  ASSERT_FALSE(slice.ok());
  EXPECT_NE(slice.status().message().find("sched_getattr: "), std::string::npos)
      << slice.status().ToString();
}

}  // namespace
}  // namespace delaybridge::plugin
