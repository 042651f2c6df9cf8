// DiskJobs: blocking disk work run off the owner's thread, one job at a time, each job's
// completion run back on the owner's thread (DiskWorker). An interface, so the parts that
// submit fdatasyncs and wait for them are unit-tested with a fake that runs the jobs when the
// test says.
//
// Thread-safety: Submit and Finish are called from the owner's thread only.
#pragma once

#include <functional>

#include "core/status.h"

namespace delaybridge::plugin {

class DiskJobs {
 public:
  using Work = std::function<Status()>;
  using Completion = std::function<void(const Status&)>;

  virtual ~DiskJobs() = default;

  virtual void Submit(Work work, Completion done) = 0;
  // Blocks until every submitted job has run, then runs their completions here (a revocation or
  // shutdown needs their effects before it goes on).
  virtual void Finish() = 0;
};

}  // namespace delaybridge::plugin
