#include "plugin/scheduler_slice.h"

// <sched.h> would define struct sched_param a second time.
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace delaybridge::plugin {
namespace {

// glibc 2.36 has no wrapper for either call.
Status GetAttr(int tid, sched_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  if (syscall(SYS_sched_getattr, tid, attr, sizeof(*attr), 0) != 0) {
    return Status::IOError(std::string("sched_getattr: ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status RequestSchedulerSlice(int64_t slice_us) {
  if (slice_us < kMinSchedulerSliceUs || slice_us > kMaxSchedulerSliceUs) {
    return Status::InvalidArgument("scheduler slice of " + std::to_string(slice_us) +
                                   " us is outside [" + std::to_string(kMinSchedulerSliceUs) +
                                   ", " + std::to_string(kMaxSchedulerSliceUs) + "]");
  }
  sched_attr attr;
  if (Status s = GetAttr(0, &attr); !s.ok()) return s;
  if (attr.sched_policy != SCHED_NORMAL && attr.sched_policy != SCHED_BATCH) return Status::Ok();
  // Policy and nice stay as read: sched_setattr sets them too, and a thread the operator made
  // nicer must not be made less nice (which would also need a privilege).
  attr.size = sizeof(attr);
  attr.sched_flags = 0;
  attr.sched_runtime = static_cast<uint64_t>(slice_us) * 1000;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
    return Status::IOError(std::string("sched_setattr: ") + std::strerror(errno));
  }
  return Status::Ok();
}

Result<int64_t> SchedulerSliceOfThread(int tid) {
  sched_attr attr;
  if (Status s = GetAttr(tid, &attr); !s.ok()) return s;
  return static_cast<int64_t>(attr.sched_runtime / 1000);
}

}  // namespace delaybridge::plugin
