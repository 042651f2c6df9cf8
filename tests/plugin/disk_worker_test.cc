// DiskWorker: jobs run off the owner's thread, one at a time and in order; each completion runs
// exactly once on the owner's thread, posted there or run by Finish().
#include "plugin/disk_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>
#include <vector>

namespace delaybridge::plugin {
namespace {

TEST(DiskWorkerTest, JobsRunInOrderOffTheOwnerThreadAndCompleteOnIt) {
  boost::asio::io_context io;
  const std::thread::id owner = std::this_thread::get_id();
  std::vector<int> ran;        // written by the worker, read after Finish
  std::vector<int> completed;  // owner thread only
  DiskWorker worker(io);
  for (int i = 0; i < 50; ++i) {
    worker.Submit(
        [&ran, owner, i] {
          EXPECT_NE(std::this_thread::get_id(), owner);
          ran.push_back(i);
          return i % 7 == 3 ? Status::IOError("disk full at job " + std::to_string(i))
                            : Status::Ok();
        },
        [&completed, owner, i](const Status& s) {
          EXPECT_EQ(std::this_thread::get_id(), owner);
          EXPECT_EQ(s.ok(), i % 7 != 3) << s.ToString();
          completed.push_back(i);
        });
  }
  EXPECT_FALSE(worker.idle());
  // Completions arrive through the io_context (the guard keeps run_one waiting for them).
  auto guard = boost::asio::make_work_guard(io);
  while (completed.size() < 50) io.run_one();
  EXPECT_TRUE(worker.idle());
  std::vector<int> expected(50);
  for (int i = 0; i < 50; ++i) expected[i] = i;
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(completed, expected);
}

TEST(DiskWorkerTest, FinishRunsTheCompletionsHereExactlyOnce) {
  boost::asio::io_context io;
  int completions = 0;
  DiskWorker worker(io);
  for (int i = 0; i < 10; ++i) {
    worker.Submit([] { return Status::Ok(); }, [&completions](const Status&) { ++completions; });
  }
  worker.Finish();
  EXPECT_EQ(completions, 10);
  EXPECT_TRUE(worker.idle());
  io.poll();  // the posted wake-ups find nothing left to complete
  EXPECT_EQ(completions, 10);
}

TEST(DiskWorkerTest, DestructionRunsQueuedJobs) {
  boost::asio::io_context io;
  std::atomic<int> ran{0};
  {
    DiskWorker worker(io);
    for (int i = 0; i < 10; ++i) {
      worker.Submit(
          [&ran] {
            ++ran;
            return Status::Ok();
          },
          [](const Status&) {});
    }
  }
  EXPECT_EQ(ran.load(), 10);
}

}  // namespace
}  // namespace delaybridge::plugin
