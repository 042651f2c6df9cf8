#include "fuzz/store_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/fuzz_input.h"
#include "storage/delivery_checkpoint.h"
#include "storage/hour_files.h"

namespace delaybridge::fuzz {

std::array<std::string, 4> StoreFileNames() {
  const storage::HourPaths paths = storage::PathsOfHour("", kStoreEpochHour);
  const auto name = [](const std::string& path) {
    return std::filesystem::path(path).filename().string();
  };
  return {name(paths.data), name(paths.index), name(paths.heads), storage::kCheckpointFileName};
}

std::string PackStore(const std::string& dir) {
  std::string packed;
  for (const std::string& name : StoreFileNames()) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::ostringstream bytes;
    if (in) bytes << in.rdbuf();
    const std::string content = bytes.str().substr(0, 0xFFFF);
    packed.push_back(static_cast<char>(content.size() & 0xFF));
    packed.push_back(static_cast<char>(content.size() >> 8));
    packed += content;
  }
  return packed;
}

void UnpackStore(const uint8_t* data, size_t size, const std::string& dir) {
  FuzzInput input(data, size);
  for (const std::string& name : StoreFileNames()) {
    const std::string_view piece = input.Piece();
    if (piece.empty()) continue;
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
}

}  // namespace delaybridge::fuzz
