// PromtoolCheck: `promtool check metrics` (Debian's prometheus package) on a text, as a test of
// the bridge's /metrics output: the exposition format parses and the names follow Prometheus'
// rules (counters end in _total, base units, HELP and TYPE present).
//
// Thread-safety: plain function.
#pragma once

#include <string>

namespace delaybridge::testing {

struct PromtoolResult {
  bool passed = false;  // exit 0 and nothing printed
  std::string output;   // what promtool printed, or why it could not run
};

// scratch_file: where the text is written for promtool to read.
PromtoolResult PromtoolCheck(const std::string& text, const std::string& scratch_file);

}  // namespace delaybridge::testing
