// ChildProcess: runs a binary under test (delaybridge, delaybridge-load) with its stdout in a
// file, so a test can wait for a line or for the exit with a deadline and never hang on a
// full pipe. The destructor stops a child that is still running (SIGTERM, then SIGKILL).
//
// Thread-safety: one owner thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::load {

// A path for a child's stdout: `name` in $TMPDIR (or /tmp), made unique to this test process.
std::string TempPath(const std::string& name);

class ChildProcess {
 public:
  // Starts argv[0] with the given arguments; stdout goes to stdout_path, stderr is inherited
  // (so it shows in the test log).
  static Result<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                     const std::string& stdout_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Returns the first stdout line for which `wanted` is true, or an error when the child exits
  // first or timeout_ms passes.
  Result<std::string> WaitForLine(const std::function<bool(const std::string&)>& wanted,
                                  int timeout_ms);

  // Waits for the exit and returns the exit status; an error (and the child is killed) when
  // timeout_ms passes first or the child died from a signal.
  Result<int> WaitForExit(int timeout_ms);

  // Sends SIGTERM and waits for the exit as WaitForExit does: for a child that stops cleanly
  // on SIGTERM and is expected to report something as it does.
  Result<int> Terminate(int timeout_ms);

  // Everything written to stdout so far.
  std::string Output() const;

 private:
  ChildProcess(pid_t pid, std::string name, std::string stdout_path);
  bool Reap(int* wait_status, bool block);
  void Stop();

  pid_t pid_;
  bool running_ = true;
  std::string name_;
  std::string stdout_path_;
};

}  // namespace delaybridge::load
