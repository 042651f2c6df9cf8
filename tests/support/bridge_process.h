// BridgeProcess: the delaybridge binary run as a child process, the way operators run it.
// Output (stdout and stderr) goes to a log file the test can search; the test can stop the
// bridge with SIGTERM (clean shutdown) or SIGKILL (crash) and read its exit status.
// RunBridgeCommand runs one short command (--check, --help, a bad config) to completion.
//
// Thread-safety: one owner thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace delaybridge::testing {

class BridgeProcess {
 public:
  BridgeProcess(std::string binary, std::string config_path, std::string log_path)
      : binary_(std::move(binary)),
        config_path_(std::move(config_path)),
        log_path_(std::move(log_path)) {}
  ~BridgeProcess();  // SIGKILLs a bridge still running

  // Starts `binary --config config_path`, appending its output to the log file.
  Status Start();
  // Entries ("NAME=value") added to the environment of every later Start().
  void set_environment(std::vector<std::string> entries) { environment_ = std::move(entries); }
  bool running();
  // Waits until the log contains needle (true), the process exits, or timeout passes.
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout);
  // Number of log lines containing needle.
  size_t CountInLog(const std::string& needle) const;
  std::string Log() const;

  // SIGTERM, then waits for the exit; returns the exit code (or an error when it was killed
  // by a signal or did not exit in time, after a SIGKILL).
  Result<int> Terminate(std::chrono::milliseconds timeout);
  // Waits for the bridge to exit by itself; returns the exit code like Terminate (SIGKILLs it
  // when timeout passes; what names the wait in that error).
  Result<int> WaitForExit(std::chrono::milliseconds timeout,
                          const std::string& what = "of stopping by itself");
  // SIGKILL and reap: a crash.
  void Kill();
  // SIGSTOP / SIGCONT: a process that stalls (a long GC-like pause, a frozen VM) and resumes.
  void Freeze();
  void Thaw();

 private:
  std::optional<int> Reap(bool block);

  std::string binary_;
  std::string config_path_;
  std::string log_path_;
  std::vector<std::string> environment_;
  pid_t pid_ = -1;
};

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string output;  // stdout and stderr, interleaved
};

// Runs binary with args, waiting at most timeout (then SIGKILL).
CommandResult RunBridgeCommand(const std::string& binary, const std::vector<std::string>& args,
                               std::chrono::milliseconds timeout);

}  // namespace delaybridge::testing
