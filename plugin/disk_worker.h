// DiskWorker: one thread for the bridge's blocking disk work (the fdatasyncs of a group commit,
// checkpoint writes), so the event loop goes on consuming and ingesting while the disk is slow.
// On a machine where one fdatasync took up to 3 s (a Kafka broker's dirty pages on the same
// ext4 disk), running them on the loop stopped ingest for that long (docs/BENCHMARKS.md).
//
// Jobs run one at a time, in submission order. A job's completion runs on the owner's
// io_context thread, exactly once: posted there after the job ran, or earlier from Finish().
//
// Thread-safety: Submit, Finish and idle are called from the owner's io_context thread only;
// the work functions run on the worker thread and must touch only what the owner leaves alone
// until their completion has run.
#pragma once

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/status.h"
#include "plugin/disk_jobs.h"

namespace delaybridge::plugin {

class DiskWorker final : public DiskJobs {
 public:
  explicit DiskWorker(boost::asio::io_context& owner);
  // Runs the queued jobs (their completions are dropped) and joins the thread.
  ~DiskWorker() override;
  DiskWorker(const DiskWorker&) = delete;
  DiskWorker& operator=(const DiskWorker&) = delete;

  void Submit(Work work, Completion done) override;
  void Finish() override;
  // Every submitted job has run and its completion has run too.
  bool idle() const { return outstanding_ == 0; }

 private:
  struct Done {
    Completion done;
    Status status;
  };
  void Loop();
  void RunCompletions();

  boost::asio::io_context& owner_;
  size_t outstanding_ = 0;  // owner side: submitted, completion not yet run

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::pair<Work, Completion>> queue_;  // guarded by mu_
  std::deque<Done> completed_;                     // guarded by mu_
  bool running_job_ = false;                       // guarded by mu_
  bool stopping_ = false;                          // guarded by mu_
  std::thread thread_;                             // last: started after everything above exists
};

}  // namespace delaybridge::plugin
