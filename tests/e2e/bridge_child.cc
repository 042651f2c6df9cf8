#include "tests/e2e/bridge_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace delaybridge::e2e {

BridgeChild::BridgeChild(std::string binary, std::string config_path, std::string log_path)
    : binary_(std::move(binary)),
      config_path_(std::move(config_path)),
      log_path_(std::move(log_path)) {}

BridgeChild::~BridgeChild() {
  if (Running()) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

Status BridgeChild::Start() {
  if (Running())
    return Status::FailedPrecondition("bridge already running as pid " + std::to_string(pid_));
  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IOError("open " + log_path_ + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    const char* argv[] = {binary_.c_str(), "--config", config_path_.c_str(), nullptr};
    ::execv(binary_.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;
  exited_ = false;
  return Status::Ok();
}

bool BridgeChild::Running() {
  if (pid_ < 0 || exited_) return false;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == 0) return true;
  last_wait_status_ = status;
  exited_ = true;
  return false;
}

Result<int> BridgeChild::Stop(int signal, std::chrono::milliseconds timeout) {
  if (!Running()) {
    return Status::FailedPrecondition("bridge not running (" + DescribeExit() + ")");
  }
  ::kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("bridge pid " + std::to_string(pid_) + " did not exit within " +
                                 std::to_string(timeout.count()) + " ms of signal " +
                                 std::to_string(signal));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return last_wait_status_;
}

std::string BridgeChild::DescribeExit() const {
  if (pid_ < 0) return "never started";
  if (!exited_) return "running as pid " + std::to_string(pid_);
  return DescribeWaitStatus(last_wait_status_);
}

std::string BridgeChild::LogTail(size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string all = buffer.str();
  return all.size() <= max_bytes ? all : all.substr(all.size() - max_bytes);
}

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return "killed by signal " + std::to_string(WTERMSIG(wait_status));
  return "wait status " + std::to_string(wait_status);
}

}  // namespace delaybridge::e2e
