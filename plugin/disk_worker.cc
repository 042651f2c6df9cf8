#include "plugin/disk_worker.h"

#include <pthread.h>

#include <boost/asio/post.hpp>

namespace delaybridge::plugin {

DiskWorker::DiskWorker(boost::asio::io_context& owner)
    : owner_(owner), thread_([this] { Loop(); }) {
  pthread_setname_np(thread_.native_handle(), "disk");
}

DiskWorker::~DiskWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DiskWorker::Submit(Work work, Completion done) {
  ++outstanding_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(std::move(work), std::move(done));
  }
  changed_.notify_all();
}

void DiskWorker::Finish() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return queue_.empty() && !running_job_; });
  }
  RunCompletions();
}

void DiskWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything submitted has run
    auto [work, done] = std::move(queue_.front());
    queue_.pop_front();
    running_job_ = true;
    lock.unlock();
    Status status = work();
    lock.lock();
    running_job_ = false;
    const bool first = completed_.empty();
    completed_.push_back(Done{std::move(done), std::move(status)});
    if (first && !stopping_) boost::asio::post(owner_, [this] { RunCompletions(); });
    changed_.notify_all();
  }
}

void DiskWorker::RunCompletions() {
  std::deque<Done> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready.swap(completed_);
  }
  for (Done& d : ready) {
    --outstanding_;
    d.done(d.status);
  }
}

}  // namespace delaybridge::plugin
