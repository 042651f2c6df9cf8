// Prints one stored record for --second and the --find modes: where it is (hour file, data
// offset, index entry, second, ordinal), whether it is delivered, and its decoded content. A
// DelayedRecord shows its target, source, key, value and headers as a preview, in full (--full)
// or also as hex (--hex), and CANCELLED when a cancel of its second names it; a cancel shows the
// record it cancels and its own source id and timestamp (tools/dump/stored_payload.h).
//
// Thread-safety: one thread runs a dump.
#pragma once

#include <string>

#include "storage/delay_log_reader.h"
#include "tools/dump/dump_context.h"
#include "tools/dump/stored_payload.h"

namespace delaybridge::dump {

// cancels must hold every cancel of the record's second. Returns kExitDamaged when the record
// could not be read or decoded, else kExitOk.
int PrintRecord(const DumpContext& ctx, const std::string& store,
                const storage::ChainRecordView& record, const MaybeCheckpoint& checkpoint,
                const CancelTargets& cancels);

}  // namespace delaybridge::dump
