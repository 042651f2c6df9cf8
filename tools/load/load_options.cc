#include "tools/load/load_options.h"

#include <charconv>

#include "tools/load/duration_spec.h"
#include "tools/load/record_stamp.h"

namespace delaybridge::load {

namespace {

Result<int64_t> ParseCount(const std::string& flag, const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::InvalidArgument(flag + ": expected a non-negative integer, got '" + text + "'");
  }
  return value;
}

Result<double> ParseRate(const std::string& text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::InvalidArgument("--rate: expected records per second >= 0, got '" + text + "'");
  }
  return value;
}

Result<HeaderStyle> ParseHeaderStyle(const std::string& text) {
  if (text == "x-delay") return HeaderStyle::kDelay;
  if (text == "x-deliver-at") return HeaderStyle::kDeliverAt;
  if (text == "mixed") return HeaderStyle::kMixed;
  return Status::InvalidArgument("--headers: expected x-delay, x-deliver-at or mixed, got '" +
                                 text + "'");
}

Result<LoadMode> ParseMode(const std::string& text) {
  if (text == "bridge") return LoadMode::kBridge;
  if (text == "passthrough") return LoadMode::kPassthrough;
  if (text == "pipe") return LoadMode::kPipe;
  if (text == "direct") return LoadMode::kDirect;
  return Status::InvalidArgument("--mode: expected bridge, passthrough, pipe or direct, got '" +
                                 text + "'");
}

Result<std::pair<std::string, std::string>> ParseKeyValue(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("-X: expected key=value, got '" + text + "'");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

// Assigns a parsed value or returns the parse error from the enclosing function.
#define LOAD_ASSIGN_OR_RETURN(target, expr)   \
  do {                                        \
    auto parsed = (expr);                     \
    if (!parsed.ok()) return parsed.status(); \
    target = std::move(parsed.value());       \
  } while (0)

// --mode pipe produces nothing: it runs for --duration or until a signal, so a --count is a
// mistake; and the hold of --due-together needs the producer's start time, which the pipe process
// does not know.
Status ValidatePipe(const LoadOptions& options) {
  if (options.count > 0) {
    return Status::InvalidArgument(
        "--mode pipe forwards until SIGTERM/SIGINT or --duration; --count does not apply");
  }
  if (options.due_together_ms > 0) {
    return Status::InvalidArgument(
        "--mode pipe cannot hold records for --due-together; use --mode passthrough");
  }
  if (!options.late_records_file.empty()) {
    return Status::InvalidArgument(
        "--mode pipe measures nothing; give --late-records to the run that measures it");
  }
  return Status::Ok();
}

// --mode direct measures the producer alone: its records are due when produced, nothing
// consumes the delay topic, and the lateness is what its consumer sees.
Status ValidateDirect(const LoadOptions& options) {
  if (!options.delay.always_zero() || options.due_together_ms > 0) {
    return Status::InvalidArgument(
        "--mode direct: records are due when produced; drop --delay and --due-together");
  }
  if (!options.wait_group.empty()) {
    return Status::InvalidArgument(
        "--mode direct: no deliverer consumes the delay topic; drop --wait-group");
  }
  if (!options.consume) {
    return Status::InvalidArgument("--mode direct measures the producer; drop --no-consume");
  }
  return Status::Ok();
}

Status Validate(const LoadOptions& options) {
  if (options.bootstrap.empty()) {
    return Status::InvalidArgument("--bootstrap is required (HOST:PORT or embedded)");
  }
  if (options.mode != LoadMode::kDirect && options.delay_topic == options.target_topic) {
    return Status::InvalidArgument("--delay-topic and --target-topic must differ");
  }
  if (options.embedded_partitions <= 0) {
    return Status::InvalidArgument("--embedded-partitions: must be > 0");
  }
  if (options.mode == LoadMode::kPipe) return ValidatePipe(options);
  if ((options.count == 0) == (options.duration_ms == 0)) {
    return Status::InvalidArgument("give exactly one of --count N (N > 0) or --duration D (D > 0)");
  }
  if (options.payload_bytes < static_cast<int64_t>(kRecordStampBytes)) {
    return Status::InvalidArgument("--payload-bytes: must be at least " +
                                   std::to_string(kRecordStampBytes) +
                                   " (the record stamp lives in the value)");
  }
  if (options.mode == LoadMode::kPassthrough && !options.consume) {
    return Status::InvalidArgument(
        "--mode passthrough measures the pipe and needs consuming; "
        "drop --no-consume");
  }
  if (!options.extra_topics.empty() && options.create_topics_partitions == 0) {
    return Status::InvalidArgument("--create-extra needs --create-topics P");
  }
  if (!options.late_records_file.empty() && !options.consume) {
    return Status::InvalidArgument("--late-records lists delivered records; drop --no-consume");
  }
  if (options.due_together_ms > 0 && !options.delay.always_zero()) {
    return Status::InvalidArgument("--due-together and --delay exclude each other");
  }
  if (options.mode == LoadMode::kDirect) return ValidateDirect(options);
  return Status::Ok();
}

}  // namespace

Result<LoadOptions> ParseLoadOptions(const std::vector<std::string>& args) {
  LoadOptions options;
  bool late_over_given = false;
  bool delay_topic_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      options.show_help = true;
      return options;
    }
    if (flag == "--json") {
      options.json = true;
      continue;
    }
    if (flag == "--no-consume") {
      options.consume = false;
      continue;
    }
    if (i + 1 >= args.size()) {
      return Status::InvalidArgument(flag + ": unknown flag or missing value (see --help)");
    }
    const std::string& value = args[++i];
    if (flag == "--bootstrap") {
      options.bootstrap = value;
    } else if (flag == "--mode") {
      LOAD_ASSIGN_OR_RETURN(options.mode, ParseMode(value));
    } else if (flag == "--delay-topic") {
      options.delay_topic = value;
      delay_topic_given = true;
    } else if (flag == "--target-topic") {
      options.target_topic = value;
    } else if (flag == "--count") {
      LOAD_ASSIGN_OR_RETURN(options.count, ParseCount(flag, value));
    } else if (flag == "--duration") {
      LOAD_ASSIGN_OR_RETURN(options.duration_ms, ParseDurationMs(value));
    } else if (flag == "--rate") {
      LOAD_ASSIGN_OR_RETURN(options.rate_per_s, ParseRate(value));
    } else if (flag == "--delay") {
      LOAD_ASSIGN_OR_RETURN(options.delay, DelayDistribution::Parse(value));
    } else if (flag == "--payload-bytes") {
      LOAD_ASSIGN_OR_RETURN(options.payload_bytes, ParseCount(flag, value));
    } else if (flag == "--keys") {
      LOAD_ASSIGN_OR_RETURN(options.keys, ParseCount(flag, value));
    } else if (flag == "--headers") {
      LOAD_ASSIGN_OR_RETURN(options.header_style, ParseHeaderStyle(value));
    } else if (flag == "--due-together") {
      LOAD_ASSIGN_OR_RETURN(options.due_together_ms, ParseDurationMs(value));
    } else if (flag == "--timeout") {
      LOAD_ASSIGN_OR_RETURN(options.timeout_ms, ParseDurationMs(value));
    } else if (flag == "--lost-grace") {
      LOAD_ASSIGN_OR_RETURN(options.lost_grace_ms, ParseDurationMs(value));
    } else if (flag == "--warmup") {
      LOAD_ASSIGN_OR_RETURN(options.warmup, ParseCount(flag, value));
    } else if (flag == "--wait-group") {
      options.wait_group = value;
    } else if (flag == "--create-topics") {
      LOAD_ASSIGN_OR_RETURN(options.create_topics_partitions, ParseCount(flag, value));
    } else if (flag == "--create-extra") {
      options.extra_topics.push_back(value);
    } else if (flag == "--embedded-partitions") {
      LOAD_ASSIGN_OR_RETURN(options.embedded_partitions, ParseCount(flag, value));
    } else if (flag == "--late-records") {
      options.late_records_file = value;
    } else if (flag == "--late-over") {
      LOAD_ASSIGN_OR_RETURN(options.late_over_ms, ParseDurationMs(value));
      late_over_given = true;
    } else if (flag == "--seed") {
      int64_t seed = 0;
      LOAD_ASSIGN_OR_RETURN(seed, ParseCount(flag, value));
      options.seed = static_cast<uint64_t>(seed);
    } else if (flag == "-X") {
      std::pair<std::string, std::string> key_value;
      LOAD_ASSIGN_OR_RETURN(key_value, ParseKeyValue(value));
      options.rdkafka_overrides.push_back(std::move(key_value));
    } else {
      return Status::InvalidArgument(flag + ": unknown flag (see --help)");
    }
  }
  if (late_over_given && options.late_records_file.empty()) {
    return Status::InvalidArgument("--late-over sets what --late-records lists; give that too");
  }
  if (delay_topic_given && options.mode == LoadMode::kDirect) {
    return Status::InvalidArgument(
        "--mode direct produces to --target-topic and uses no delay topic; drop --delay-topic");
  }
  Status valid = Validate(options);
  if (!valid.ok()) return valid;
  return options;
}

#undef LOAD_ASSIGN_OR_RETURN

const char* LoadModeName(LoadMode mode) {
  switch (mode) {
    case LoadMode::kBridge:
      return "bridge";
    case LoadMode::kPassthrough:
      return "passthrough";
    case LoadMode::kPipe:
      return "pipe";
    case LoadMode::kDirect:
      return "direct";
  }
  return "?";
}

const std::string& ProducedTopic(const LoadOptions& options) {
  return options.mode == LoadMode::kDirect ? options.target_topic : options.delay_topic;
}

const char* HeaderStyleName(HeaderStyle style) {
  switch (style) {
    case HeaderStyle::kDelay:
      return "x-delay";
    case HeaderStyle::kDeliverAt:
      return "x-deliver-at";
    case HeaderStyle::kMixed:
      return "mixed";
  }
  return "?";
}

std::string LoadUsage() {
  return R"(delaybridge-load: load generator and end-to-end meter for DelayBridge.

Produces records with delay headers to a delay topic, consumes the target topic, and reports
produced / delivered / lost / duplicated counts, throughput and lateness (how long after its
deliver-at each record arrived) as text or JSON.

usage: delaybridge-load --bootstrap HOST:PORT (--count N | --duration D) [options]
       delaybridge-load --mode pipe --bootstrap HOST:PORT [--duration D] [options]

  --bootstrap HOST:PORT    Kafka bootstrap servers, or "embedded": start librdkafka's
                           in-process mock cluster (its address is printed on stderr)
  --mode bridge|passthrough|pipe|direct
                           bridge (default): something else delivers delay -> target.
                           passthrough: the tool also runs a plain consume-and-produce pipe
                           from the delay topic to the target (acks=all, idempotent, no
                           delay), the ceiling a bridge can reach; lateness is then measured
                           from the produce time.
                           pipe: run only that pipe, in a process of its own (so its CPU time
                           can be read apart from the load), from the delay topic's end until
                           SIGTERM/SIGINT or --duration; prints "pipe ready
                           bootstrap.servers=HOST:PORT" once it forwards, and at the end the
                           records it forwarded (with --json: {"mode":"pipe",...}). Measure it
                           with --mode bridge and no --delay, as if it were a bridge.
                           direct: produce straight to the target topic, each record due
                           when produced, with no deliverer: the lateness of the tool's
                           producer alone, the floor of any deliverer producing at the due
                           moment with the same client settings (-X changes them).
  --delay-topic NAME       default delayed
  --target-topic NAME      default delivered
  --count N                produce N records
  --duration D             or produce for D (e.g. 30s); with --mode pipe: stop after D
  --rate R                 records per second; 0 (default) = as fast as possible
  --delay SPEC             fixed:D | uniform:A..B | mix (1s..30d); default fixed:0
                           durations: 250ms, 5s, 2m, 3h, 30d (bare number = ms)
  --due-together D         instead of --delay: every record is due at the same instant, D after
                           producing starts (x-deliver-at), so the deliverer's drain rate is
                           measured apart from the producer; in passthrough mode the pipe holds
                           until then
  --payload-bytes N        value size, >= 28 (the stamp: run id, record id, deliver-at); 100
  --keys K                 distinct keys, drawn at random; 0 = no key; default 1000
  --headers STYLE          x-delay | x-deliver-at (default) | mixed
  --timeout D              after producing, wait this long for outstanding deliveries; 30s
  --lost-grace D           undelivered records due longer ago than this at the end count as
                           lost, later ones as pending; default 5s
  --warmup N               before measuring, send N records with x-delay: 0 and wait (up to
                           --timeout) until they all arrive, so that connection set-up and
                           group joins are not measured; default 10; 0 = measure from cold
                           (e.g. the time a restarted bridge takes to deliver again)
  --no-consume             produce only (e.g. to fill a bridge with long delays)
  --wait-group GROUP       after producing, wait (up to --timeout) until consumer group GROUP
                           has committed offsets up to the end of the delay topic
  --create-topics P        create the delay and target topics with P partitions if missing
                           (target with message.timestamp.type=LogAppendTime; --mode
                           direct: the target only)
  --create-extra TOPIC     with --create-topics: create TOPIC too (repeatable; e.g. the
                           bridge's dead-letter topic)
  --embedded-partitions P  partitions per topic of the embedded cluster; default 8
  --seed N                 random seed for delays and keys; default 1
  -X key=value             librdkafka property for every client (repeatable; overrides the
                           tool's defaults)
  --late-records FILE      write "deliver_at_ms log_append_time_ms" of every record whose
                           LogAppendTime is more than --late-over after its deliver-at, one
                           line each, in arrival order (to line the lateness tail up with the
                           broker's pauses, e.g. its gc.log)
  --late-over D            the lateness --late-records lists records beyond (only with
                           --late-records); default 5ms
  --json                   print the report as one JSON object on stdout
  --help

Lateness is reported twice: consume time minus deliver-at (what a consumer sees), and the
target record's broker timestamp minus deliver-at (exact delivery time when the target topic
uses LogAppendTime; with CreateTime it is the deliverer's own timestamp).
A record is EARLY when the consumer receives it before its deliver-at, or when its
LogAppendTime is before its deliver-at.
The producer's own produce-to-acknowledgement latency is reported too: when it grows, records
reach the delay topic late, and late deliveries are the producer's, not the deliverer's.

exit status: 0 every awaited record delivered exactly once and none early; 1 the run finished
but records were lost, duplicated or early; 2 bad arguments (a --late-records file that cannot
be created included); 3 Kafka error, or writing the --late-records file failed.
)";
}

}  // namespace delaybridge::load
