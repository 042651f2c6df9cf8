#include "tests/support/promtool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace delaybridge::testing {

PromtoolResult PromtoolCheck(const std::string& text, const std::string& scratch_file) {
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (::access(kPromtool, X_OK) != 0) {
    return {false, std::string(kPromtool) +
                       " not found: install Debian's prometheus package (scripts/setup.sh does)"};
  }
  std::ofstream(scratch_file) << text;
  const std::string command =
      std::string(kPromtool) + " check metrics < '" + scratch_file + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {false, "cannot run " + command};
  PromtoolResult result;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.passed = WIFEXITED(status) && WEXITSTATUS(status) == 0 && result.output.empty();
  return result;
}

}  // namespace delaybridge::testing
