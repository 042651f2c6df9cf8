#include "tools/dump/dump_context.h"

#include <tuple>

#include "tools/dump/dump_time.h"

namespace delaybridge::dump {

int ReportFailure(const DumpContext& ctx, const std::string& store, const Status& status) {
  ctx.err << "delaylog-dump: " << status.ToString() << '\n';
  if (ctx.options.json) {
    ctx.Emit(JsonLine("error").Str("store", store).Str("message", status.ToString()));
  }
  return status.code() == Status::Code::kCorruption ? kExitDamaged : kExitUsage;
}

bool IsDelivered(const MaybeCheckpoint& checkpoint, int64_t deliver_at_ms, uint32_t ordinal) {
  if (!checkpoint) return false;
  return std::tie(deliver_at_ms, ordinal) <
         std::tie(checkpoint->next_deliver_at_ms, checkpoint->next_ordinal);
}

void PrintCheckpoint(const DumpContext& ctx, const std::string& store, const MaybeCheckpoint& cp) {
  if (ctx.options.json) {
    JsonLine line("checkpoint");
    line.Str("store", store).Bool("present", cp.has_value());
    if (cp) {
      line.Int("next_deliver_at_ms", cp->next_deliver_at_ms)
          .Str("next_deliver_at", IsoMs(cp->next_deliver_at_ms))
          .Uint("next_ordinal", cp->next_ordinal)
          .Int("updated_at_ms", cp->updated_at_ms)
          .Str("updated_at", IsoMs(cp->updated_at_ms));
    }
    ctx.Emit(line);
  } else if (cp) {
    ctx.out << "  checkpoint: delivered everything before " << IsoMs(cp->next_deliver_at_ms) << " ("
            << cp->next_deliver_at_ms << " ms) ordinal " << cp->next_ordinal << "; written "
            << IsoMs(cp->updated_at_ms) << '\n';
  } else {
    ctx.out << "  checkpoint: none yet (nothing delivered from this store)\n";
  }
}

}  // namespace delaybridge::dump
