#include "storage/parallel_sync.h"

#include <atomic>
#include <mutex>
#include <thread>

namespace delaybridge::storage {

Status RunConcurrently(const std::vector<std::function<Status()>>& tasks) {
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;
  Status first_failure;
  auto worker = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      Status s = tasks[i]();
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (first_failure.ok()) first_failure = s;
      }
    }
  };
  size_t helpers = std::min(tasks.size(), kMaxSyncThreads) - (tasks.empty() ? 0 : 1);
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return first_failure;
}

}  // namespace delaybridge::storage
