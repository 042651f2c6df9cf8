// The per-hour head table file (".heads", docs/storage-format.md "Head table file"): two
// CRC-protected slots written alternately, so a torn save leaves the previous table intact.
// Free functions; callers serialise access to one hour's file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "storage/format.h"

namespace delaybridge::storage {

// The valid slot with the highest generation; nullopt when the file is absent or has no valid
// slot. A file whose header is damaged or of a newer version is an error.
Result<std::optional<HeadsSlot>> LoadHeads(const std::string& path, int64_t epoch_hour);

// Writes slot into the position its generation selects, without fdatasync (see the format
// doc: the slot only covers entries already synced). Creates the file (header and both
// zeroed slots) when missing or shorter than kHeadsFileSize.
Status SaveHeads(const std::string& path, int64_t epoch_hour, const HeadsSlot& slot);

}  // namespace delaybridge::storage
