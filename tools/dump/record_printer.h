// Prints one stored record for --second and the --find modes: where it is (hour file, data
// offset, index entry, second, ordinal), whether it is delivered, and its decoded content
// (target, source, key, value, headers) as a preview, in full (--full) or also as hex (--hex).
//
// Thread-safety: one thread runs a dump.
#pragma once

#include <string>

#include "storage/delay_log_reader.h"
#include "tools/dump/dump_context.h"

namespace delaybridge::dump {

// Returns kExitDamaged when the record could not be read or decoded, else kExitOk.
int PrintRecord(const DumpContext& ctx, const std::string& store,
                const storage::ChainRecordView& record, const MaybeCheckpoint& checkpoint);

}  // namespace delaybridge::dump
