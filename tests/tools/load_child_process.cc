#include "tests/tools/load_child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace delaybridge::load {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name + "." + std::to_string(getpid());
}

namespace {

constexpr int kStopGraceMs = 5'000;
constexpr int kPollMs = 20;

int64_t SteadyMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ChildProcess::ChildProcess(pid_t pid, std::string name, std::string stdout_path)
    : pid_(pid), name_(std::move(name)), stdout_path_(std::move(stdout_path)) {}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(const std::vector<std::string>& argv,
                                                          const std::string& stdout_path) {
  if (access(argv.at(0).c_str(), X_OK) != 0) {
    return Status::NotFound(
        argv[0] + " is not an executable file (build its target first): " + std::strerror(errno));
  }
  const int out_fd = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out_fd < 0) return Status::IOError("open " + stdout_path + ": " + std::strerror(errno));
  std::vector<char*> c_argv;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(out_fd);
    return Status::IOError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  close(out_fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, argv[0], stdout_path));
}

ChildProcess::~ChildProcess() { Stop(); }

bool ChildProcess::Reap(int* wait_status, bool block) {
  if (!running_) return true;
  const pid_t reaped = waitpid(pid_, wait_status, block ? 0 : WNOHANG);
  if (reaped == pid_) running_ = false;
  return !running_;
}

void ChildProcess::Stop() {
  if (!running_) return;
  int wait_status = 0;
  kill(pid_, SIGTERM);
  const int64_t deadline_ms = SteadyMs() + kStopGraceMs;
  while (!Reap(&wait_status, false) && SteadyMs() < deadline_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  if (running_) {
    kill(pid_, SIGKILL);
    Reap(&wait_status, true);
  }
}

Result<int> ChildProcess::Terminate(int timeout_ms) {
  if (running_) kill(pid_, SIGTERM);
  return WaitForExit(timeout_ms);
}

std::string ChildProcess::Output() const {
  std::ifstream in(stdout_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::string> ChildProcess::WaitForLine(const std::function<bool(const std::string&)>& wanted,
                                              int timeout_ms) {
  const int64_t deadline_ms = SteadyMs() + timeout_ms;
  while (true) {
    std::istringstream lines(Output());
    for (std::string line; std::getline(lines, line);) {
      if (wanted(line)) return line;
    }
    int wait_status = 0;
    if (Reap(&wait_status, false)) {
      return Status::FailedPrecondition(name_ + " exited (status " + std::to_string(wait_status) +
                                        ") before printing the expected line; stdout:\n" +
                                        Output());
    }
    if (SteadyMs() > deadline_ms) {
      return Status::Unavailable(name_ + " did not print the expected line within " +
                                 std::to_string(timeout_ms) + " ms; stdout:\n" + Output());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

Result<int> ChildProcess::WaitForExit(int timeout_ms) {
  const int64_t deadline_ms = SteadyMs() + timeout_ms;
  int wait_status = 0;
  while (!Reap(&wait_status, false)) {
    if (SteadyMs() > deadline_ms) {
      Stop();
      return Status::Unavailable(name_ + " still running after " + std::to_string(timeout_ms) +
                                 " ms; stopped it. stdout:\n" + Output());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  if (!WIFEXITED(wait_status)) {
    return Status::FailedPrecondition(name_ + " died from signal " +
                                      std::to_string(WTERMSIG(wait_status)));
  }
  return WEXITSTATUS(wait_status);
}

}  // namespace delaybridge::load
