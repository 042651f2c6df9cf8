// StoreFiles: the four files of a one-hour store (data, index, head table, checkpoint) packed
// into one fuzz input and unpacked into a directory, so the store fuzzer mutates real files and
// the seed writer packs a store it wrote with the real code.
//
// Input layout: four FuzzInput pieces (2-byte length, then the bytes), in the order of Names().
//
// Thread-safety: plain functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace delaybridge::fuzz {

// The hour every store input is about: 2026-11-22T16 UTC.
inline constexpr int64_t kStoreEpochHour = 498'712;
inline constexpr int64_t kStoreHourStartMs = kStoreEpochHour * 3'600'000;

// File names inside the store directory, in input order.
std::array<std::string, 4> StoreFileNames();

// Packs the files found in dir (a missing one packs as empty).
std::string PackStore(const std::string& dir);

// Writes the pieces of input into dir as the store's files (an empty piece: no file).
void UnpackStore(const uint8_t* data, size_t size, const std::string& dir);

}  // namespace delaybridge::fuzz
