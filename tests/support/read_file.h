// ReadFile: the whole content of a file, byte for byte ("" when it cannot be read). Tests read
// logs, reports and store files with it.
//
// Thread-safety: a plain function.
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace delaybridge::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace delaybridge::testing
