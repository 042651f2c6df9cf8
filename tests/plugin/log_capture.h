// LogCapture: a Logger whose lines go to a file in a fresh temp dir, and the text written so
// far, for tests that check what was logged.
//
// Thread-safety: logger() is as thread-safe as Logger; Text() from the test thread.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "plugin/log.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {

class LogCapture {
 public:
  explicit LogCapture(const std::string& prefix, LogFormat format = LogFormat::kText)
      : dir_(prefix),
        path_(dir_.File("log")),
        fd_(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)),
        logger_(LogLevel::kInfo, fd_, format) {
    EXPECT_GE(fd_, 0) << path_;
  }
  ~LogCapture() { ::close(fd_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  Logger& logger() { return logger_; }
  const testing::TempDir& dir() const { return dir_; }
  std::string Text() const { return testing::ReadFile(path_); }

 private:
  testing::TempDir dir_;
  std::string path_;
  int fd_;
  Logger logger_;
};

}  // namespace delaybridge::plugin
