// BridgeChild: the real delaybridge binary run as a child process, the way an operator runs it
// (`delaybridge --config FILE`), with its stdout and stderr appended to a log file. Tests stop it
// with SIGTERM or SIGKILL at moments they choose and start it again on the same config.
//
// Thread-safety: one thread drives a BridgeChild. The destructor SIGKILLs a child still running
// so a failing test never leaves a bridge behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "core/status.h"

namespace delaybridge::e2e {

class BridgeChild {
 public:
  BridgeChild(std::string binary, std::string config_path, std::string log_path);
  ~BridgeChild();
  BridgeChild(const BridgeChild&) = delete;
  BridgeChild& operator=(const BridgeChild&) = delete;

  // Forks and execs `binary --config config_path`; fails if one is already running.
  Status Start();
  // Sends `signal` and waits up to `timeout` for the process to exit. Returns the wait status
  // (as from waitpid) or an error if it did not exit in time.
  Result<int> Stop(int signal, std::chrono::milliseconds timeout);
  // True while the child runs; reaps it (and remembers its wait status) once it exited.
  bool Running();
  // The wait status of the last exit, for messages ("exited 1", "killed by signal 6").
  std::string DescribeExit() const;
  // The last `max_bytes` of the log, for failure messages.
  std::string LogTail(size_t max_bytes = 4000) const;
  const std::string& log_path() const { return log_path_; }

 private:
  std::string binary_;
  std::string config_path_;
  std::string log_path_;
  pid_t pid_ = -1;
  int last_wait_status_ = 0;
  bool exited_ = false;
};

// Describes a waitpid status: "exit code 0", "killed by signal 9".
std::string DescribeWaitStatus(int wait_status);

}  // namespace delaybridge::e2e
