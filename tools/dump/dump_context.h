// What every delaylog-dump mode shares: the options and output streams of one run, the exit
// codes, failure reporting (text on stderr, plus a JSON "error" line on stdout with --json),
// and the delivered test against a store's checkpoint.
//
// Thread-safety: one thread runs a dump.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "core/status.h"
#include "storage/delay_log_reader.h"
#include "storage/delivery_checkpoint.h"
#include "tools/dump/dump_options.h"
#include "tools/dump/json_line.h"

namespace delaybridge::dump {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDamaged = 1;  // damage found: a verify problem, an unreadable record
inline constexpr int kExitUsage = 2;    // bad arguments, or a directory that cannot be inspected

struct DumpContext {
  const DumpOptions& options;
  std::ostream& out;
  std::ostream& err;

  // Emits a finished JSON line (only called with --json).
  void Emit(const JsonLine& line) const { out << line.Finish() << '\n'; }
};

// Reports status (about store) and returns the exit code it deserves: kExitDamaged for
// Corruption, kExitUsage for everything that stops the inspection (newer format, I/O error).
int ReportFailure(const DumpContext& ctx, const std::string& store, const Status& status);

// The checkpoint of one store: nullopt when there is none yet.
using MaybeCheckpoint = std::optional<storage::DeliveryCheckpoint>;

// True when the record at (deliver_at_ms, ordinal) is ordered before the checkpoint's
// position, i.e. delivered and acknowledged (storage/delivery_checkpoint.h).
bool IsDelivered(const MaybeCheckpoint& checkpoint, int64_t deliver_at_ms, uint32_t ordinal);

// Prints store's checkpoint (text: one indented line; JSON: a "checkpoint" line).
void PrintCheckpoint(const DumpContext& ctx, const std::string& store, const MaybeCheckpoint& cp);

// The modes; each returns its exit code.
int RunSummary(const DumpContext& ctx, storage::DelayLogReader* reader);
int RunHour(const DumpContext& ctx, storage::DelayLogReader* reader);
int RunSecond(const DumpContext& ctx, storage::DelayLogReader* reader);
int RunFind(const DumpContext& ctx, storage::DelayLogReader* reader);
int RunVerify(const DumpContext& ctx, storage::DelayLogReader* reader);

}  // namespace delaybridge::dump
