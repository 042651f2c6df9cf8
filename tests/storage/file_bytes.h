// Helpers for tests that damage store files on purpose: read a whole file, overwrite bytes,
// flip a bit, cut a file. Thread-safety: plain functions on paths the test owns.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace delaybridge::storage::testing {

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void OverwriteBytes(const std::string& path, uint64_t offset, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fseek(f, static_cast<long>(offset), SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

inline void WriteNewFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline void FlipBit(const std::string& path, uint64_t offset, int bit) {
  std::string bytes = ReadFileBytes(path);
  ASSERT_LT(offset, bytes.size()) << path;
  OverwriteBytes(path, offset, std::string(1, static_cast<char>(bytes[offset] ^ (1 << bit))));
}

inline void CutFile(const std::string& path, uint64_t size) {
  std::filesystem::resize_file(path, size);
}

}  // namespace delaybridge::storage::testing
