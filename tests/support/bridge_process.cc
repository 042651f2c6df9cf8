#include "tests/support/bridge_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string_view>
#include <thread>

#include "tests/support/read_file.h"

namespace delaybridge::testing {

namespace {

using Clock = std::chrono::steady_clock;

// This process's environment with entries ("NAME=value") added or replacing those of the
// same name.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& entries) {
  std::vector<std::string> env = entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view inherited(*e);
    const std::string_view name = inherited.substr(0, inherited.find('='));
    const bool replaced = std::any_of(entries.begin(), entries.end(), [name](const auto& entry) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
             entry[name.size()] == '=';
    });
    if (!replaced) env.emplace_back(inherited);
  }
  return env;
}

// fork + exec with stdout/stderr redirected to out_fd; returns the child's pid or -1.
pid_t Spawn(const std::string& binary, const std::vector<std::string>& args, int out_fd,
            const std::vector<std::string>& environment = {}) {
  // Everything exec needs is built before fork: the child may only make async-signal-safe calls.
  std::vector<std::string> env_strings = EnvironmentWith(environment);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // Child: only async-signal-safe calls until exec.
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, 0);
  ::execve(binary.c_str(), argv.data(), envp.data());
  ::_exit(127);
}

// Polls waitpid until the child exits or the deadline passes.
std::optional<int> WaitUntil(pid_t pid, Clock::time_point deadline) {
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return -1;
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

BridgeProcess::~BridgeProcess() {
  if (pid_ > 0) Kill();
}

Status BridgeProcess::Start() {
  if (pid_ > 0) return Status::FailedPrecondition("bridge already running");
  const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("open " + log_path_ + ": " + std::strerror(errno));
  pid_ = Spawn(binary_, {"--config", config_path_}, fd, environment_);
  ::close(fd);
  if (pid_ < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
  return Status::Ok();
}

std::optional<int> BridgeProcess::Reap(bool block) {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r != pid_) return std::nullopt;
  pid_ = -1;
  return status;
}

bool BridgeProcess::running() {
  if (pid_ <= 0) return false;
  Reap(false);
  return pid_ > 0;
}

bool BridgeProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (Log().find(needle) != std::string::npos) return true;
    if (!running() || Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

size_t BridgeProcess::CountInLog(const std::string& needle) const {
  std::istringstream lines(Log());
  size_t count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) ++count;
  }
  return count;
}

std::string BridgeProcess::Log() const { return ReadFile(log_path_); }

Result<int> BridgeProcess::Terminate(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return Status::FailedPrecondition("bridge not running");
  ::kill(pid_, SIGTERM);
  return WaitForExit(timeout, "of SIGTERM");
}

Result<int> BridgeProcess::WaitForExit(std::chrono::milliseconds timeout, const std::string& what) {
  if (pid_ <= 0) return Status::FailedPrecondition("bridge not running");
  const std::optional<int> status = WaitUntil(pid_, Clock::now() + timeout);
  if (!status) {
    Kill();
    return Status::Unavailable("bridge did not exit within " + std::to_string(timeout.count()) +
                               " ms " + what);
  }
  pid_ = -1;
  if (!WIFEXITED(*status)) {
    return Status::Unavailable("bridge ended by signal " + std::to_string(WTERMSIG(*status)));
  }
  return WEXITSTATUS(*status);
}

void BridgeProcess::Freeze() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void BridgeProcess::Thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void BridgeProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  Reap(true);
}

CommandResult RunBridgeCommand(const std::string& binary, const std::vector<std::string>& args,
                               std::chrono::milliseconds timeout) {
  CommandResult result;
  char path[] = "/tmp/delaybridge-cmd.XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) {
    result.output = std::string("mkstemp: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = Spawn(binary, args, fd);
  ::close(fd);
  const std::optional<int> status = WaitUntil(pid, Clock::now() + timeout);
  if (!status) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  } else if (WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  }
  result.output = ReadFile(path);
  ::unlink(path);
  return result;
}

}  // namespace delaybridge::testing
