#include "plugin/progress_metadata.h"

#include <charconv>
#include <sstream>

namespace delaybridge::plugin {

namespace {

constexpr const char* kMagic = "delaybridge/1";

bool ParseField(const std::string& token, const std::string& name, int64_t* out) {
  const std::string prefix = name + "=";
  if (token.rfind(prefix, 0) != 0) return false;
  const char* begin = token.data() + prefix.size();
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && begin != end && *out >= 0;
}

}  // namespace

std::string EncodeProgressMetadata(const ProgressMetadata& m) {
  return std::string(kMagic) + " store=" + m.store_id +
         " checkpoint_ms=" + std::to_string(m.checkpoint_ms) +
         " late_below=" + std::to_string(m.late_below) +
         " ingest=" + std::to_string(m.ingest_position);
}

Result<std::optional<ProgressMetadata>> ParseProgressMetadata(const std::string& text) {
  if (text.empty()) return std::optional<ProgressMetadata>();
  std::istringstream in(text);
  std::string magic, store, checkpoint, late_below, ingest, extra;
  in >> magic >> store >> checkpoint >> late_below >> ingest;
  ProgressMetadata m;
  const bool ok = magic == kMagic && store.rfind("store=", 0) == 0 && store.size() > 6 &&
                  ParseField(checkpoint, "checkpoint_ms", &m.checkpoint_ms) &&
                  ParseField(late_below, "late_below", &m.late_below) &&
                  ParseField(ingest, "ingest", &m.ingest_position) && !(in >> extra) &&
                  m.late_below <= m.ingest_position;
  if (!ok) {
    return Status::InvalidArgument("committed offset metadata \"" + text.substr(0, 200) +
                                   "\" is not " + kMagic + " progress");
  }
  m.store_id = store.substr(6);
  return std::optional<ProgressMetadata>(m);
}

}  // namespace delaybridge::plugin
