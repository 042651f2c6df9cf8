#include "storage/parallel_sync.h"

#include <gtest/gtest.h>

#include <atomic>

namespace delaybridge::storage {
namespace {

TEST(RunConcurrentlyTest, RunsEveryTaskOnce) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{50}}) {
    std::vector<std::atomic<int>> runs(n);
    std::vector<std::function<Status()>> tasks;
    for (size_t i = 0; i < n; ++i) {
      tasks.push_back([&runs, i] {
        runs[i] += 1;
        return Status::Ok();
      });
    }
    EXPECT_TRUE(RunConcurrently(tasks).ok());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i], 1) << "task " << i << " of " << n;
  }
}

TEST(RunConcurrentlyTest, ReportsAFailureAfterRunningTheRest) {
  std::atomic<int> finished{0};
  std::vector<std::function<Status()>> tasks;
  for (int i = 0; i < 20; ++i) {
    tasks.push_back([&finished, i] {
      finished += 1;
      return i == 7 ? Status::IOError("fdatasync f7: Input/output error") : Status::Ok();
    });
  }
  Status s = RunConcurrently(tasks);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.message(), "fdatasync f7: Input/output error");
  EXPECT_EQ(finished, 20);
}

}  // namespace
}  // namespace delaybridge::storage
