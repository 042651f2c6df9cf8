// DirectoryLock: one holder at a time, named in the refusal; released when the holder goes.
#include "storage/directory_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/temp_dir.h"

namespace delaybridge::storage {
namespace {

TEST(DirectoryLockTest, OneHolderAtATimeNamedInTheRefusal) {
  delaybridge::testing::TempDir dir("directory_lock_test");
  {
    Result<DirectoryLock> first = DirectoryLock::Acquire(dir.path());
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    Result<DirectoryLock> second = DirectoryLock::Acquire(dir.path());
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("in use by another process (pid " +
                                             std::to_string(::getpid())),
              std::string::npos)
        << second.status().ToString();
    DirectoryLock moved = std::move(first).value();  // still held
    EXPECT_FALSE(DirectoryLock::Acquire(dir.path()).ok());
  }
  EXPECT_TRUE(DirectoryLock::Acquire(dir.path()).ok()) << "released with its holder";
}

TEST(DirectoryLockTest, AMissingDirectoryIsAnError) {
  EXPECT_EQ(DirectoryLock::Acquire("/nonexistent/store").status().code(), Status::Code::kIOError);
}

}  // namespace
}  // namespace delaybridge::storage
