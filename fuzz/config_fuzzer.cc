// Fuzzes the configuration loader on arbitrary YAML text: a configuration is parsed or refused
// with an error naming what is wrong, never a crash or an exception, and what parses can be
// described for the start-up log.
#include <cstdlib>
#include <string>

#include "plugin/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace delaybridge::plugin;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = ParseConfig(text);
  if (!config.ok()) {
    if (config.status().message().empty()) std::abort();
    return 0;
  }
  if (DescribeConfig(*config).empty()) std::abort();
  return 0;
}
