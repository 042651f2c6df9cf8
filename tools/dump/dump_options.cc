#include "tools/dump/dump_options.h"

#include <charconv>

#include "tools/dump/dump_time.h"

namespace delaybridge::dump {
namespace {

template <typename T>
bool ParseInteger(std::string_view text, T* value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

// "topic/partition/offset"; Kafka topic names cannot hold '/', so the last two fields are
// split off from the right.
Status ParseSourceId(std::string_view text, DumpOptions* options) {
  size_t offset_slash = text.rfind('/');
  size_t partition_slash = offset_slash == std::string_view::npos || offset_slash == 0
                               ? std::string_view::npos
                               : text.rfind('/', offset_slash - 1);
  if (partition_slash == std::string_view::npos || partition_slash == 0 ||
      !ParseInteger(text.substr(partition_slash + 1, offset_slash - partition_slash - 1),
                    &options->source_partition) ||
      !ParseInteger(text.substr(offset_slash + 1), &options->source_offset) ||
      options->source_partition < 0 || options->source_offset < 0) {
    return Status::InvalidArgument("--find-source " + std::string(text) +
                                   ": expected topic/partition/offset, e.g. delayed/0/42");
  }
  options->source_topic = std::string(text.substr(0, partition_slash));
  return Status::Ok();
}

// Applies the mode option `name` with its value.
Status SetMode(const std::string& name, const std::string& value, DumpOptions* options) {
  if (name == "--hour") {
    Result<int64_t> hour = ParseHourArg(value);
    if (!hour.ok()) return hour.status();
    options->mode = DumpMode::kHour;
    options->epoch_hour = *hour;
  } else if (name == "--second") {
    Result<int64_t> second = ParseSecondArg(value);
    if (!second.ok()) return second.status();
    options->mode = DumpMode::kSecond;
    options->epoch_second = *second;
  } else if (name == "--find-source") {
    if (Status s = ParseSourceId(value, options); !s.ok()) return s;
    options->mode = DumpMode::kFindSource;
  } else {
    options->mode = DumpMode::kFindKey;
    options->key = value;
  }
  return Status::Ok();
}

}  // namespace

Result<DumpOptions> ParseDumpOptions(const std::vector<std::string>& args) {
  DumpOptions options;
  bool mode_set = false;
  auto one_mode = [&](const std::string& name) -> Status {
    if (mode_set) {
      return Status::InvalidArgument(name +
                                     ": only one of --hour, --second, --find-source, "
                                     "--find-key, --verify at a time");
    }
    mode_set = true;
    return Status::Ok();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      options.mode = DumpMode::kHelp;
      return options;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--hex") {
      options.hex = true;
    } else if (arg == "--full") {
      options.full = true;
    } else if (arg == "--verify") {
      if (Status s = one_mode(arg); !s.ok()) return s;
      options.mode = DumpMode::kVerify;
    } else if (arg == "--hour" || arg == "--second" || arg == "--find-source" ||
               arg == "--find-key") {
      if (Status s = one_mode(arg); !s.ok()) return s;
      if (i + 1 == args.size()) return Status::InvalidArgument(arg + " needs a value");
      if (Status s = SetMode(arg, args[++i], &options); !s.ok()) return s;
    } else if (arg.starts_with("-") && arg != "-") {
      return Status::InvalidArgument(arg + ": unknown option (see --help)");
    } else if (!options.path.empty()) {
      return Status::InvalidArgument(arg + ": only one directory, " + options.path +
                                     " was already given");
    } else {
      options.path = arg;
    }
  }
  if (options.path.empty()) {
    return Status::InvalidArgument("no directory given: delaylog-dump [options] DIR");
  }
  return options;
}

std::string DumpUsage() {
  return R"(usage: delaylog-dump [options] DIR

Shows what a DelayBridge store holds, read-only (safe while the bridge runs). DIR is one store
directory (<storage.dir>/<topic>-<partition>) or the storage root holding several.

modes (default: summary of every hour file, totals and the delivery checkpoint):
  --hour YYYY-MM-DDTHH       record count of every non-empty second of that hour (UTC)
  --second SECOND            every record of that second, in arrival order; SECOND is epoch
                             seconds (1795000000) or ISO UTC (2026-11-22T16:05:09Z)
  --find-source T/P/O        where the record read from topic T, partition P, offset O is
                             (a delayed record, or a cancel: CANCEL of the record it names)
  --find-key KEY             where the records with this key are
  --verify                   check every checksum, index entry, chain, payload and the checkpoint

output:
  --json                     one JSON object per line (for jq), in every mode
  --hex                      keys, values and header values also as hex
  --full                     whole keys and values instead of a 64-byte preview
  --help                     this text

exit status: 0 fine, 1 damage found (--verify problems, unreadable records or checkpoint),
2 usage error or a directory that cannot be inspected (missing, not a store, newer format).
)";
}

}  // namespace delaybridge::dump
