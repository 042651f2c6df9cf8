// LoadOptions: delaybridge-load's command line, parsed and validated before any Kafka handle
// is created, so a typo costs an error message and not a half-run benchmark.
//
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "tools/load/delay_distribution.h"

namespace delaybridge::load {

enum class LoadMode {
  kBridge,       // produce to the delay topic; something else (DelayBridge) delivers to target
  kPassthrough,  // the tool also runs a plain consume-and-produce pipe delay topic -> target
  kPipe,         // the tool runs only that pipe, until SIGTERM/SIGINT or --duration
  kDirect,       // produce straight to the target, each record due when produced: no deliverer
};

enum class HeaderStyle {
  kDelay,      // x-delay: milliseconds after the record timestamp
  kDeliverAt,  // x-deliver-at: Unix epoch milliseconds
  kMixed,      // alternate the two, record by record
};

struct LoadOptions {
  bool show_help = false;
  LoadMode mode = LoadMode::kBridge;
  std::string bootstrap;  // "embedded": start librdkafka's in-process mock cluster
  std::string delay_topic = "delayed";
  std::string target_topic = "delivered";
  int64_t count = 0;        // records to produce; 0 with duration_ms > 0 means "for a duration"
  int64_t duration_ms = 0;  // produce for this long when count == 0 (pipe: run this long)
  double rate_per_s = 0;    // 0: as fast as possible
  DelayDistribution delay;
  int64_t payload_bytes = 100;
  int64_t keys = 1000;  // distinct keys; 0: records have no key
  HeaderStyle header_style = HeaderStyle::kDeliverAt;
  int64_t due_together_ms = 0;    // > 0: every record is due at (producing start + this)
  int64_t timeout_ms = 30'000;    // wait this long after producing for outstanding deliveries
  int64_t lost_grace_ms = 5'000;  // undelivered and due longer ago than this at the end: lost
  int64_t warmup = 10;            // records sent (x-delay: 0) and awaited before measuring; 0: none
  bool consume = true;            // false: produce only (filling a bridge)
  std::string wait_group;         // after producing, wait until this group committed everything
  int64_t create_topics_partitions = 0;   // > 0: create both topics (if missing) with this many
  std::vector<std::string> extra_topics;  // also created with --create-topics (e.g. the DLQ)
  int64_t embedded_partitions = 8;        // partitions per topic of the embedded cluster
  bool json = false;
  std::string late_records_file;  // non-empty: the records later than late_over_ms are listed here
  int64_t late_over_ms = 5;
  uint64_t seed = 1;
  std::vector<std::pair<std::string, std::string>> rdkafka_overrides;  // -X key=value

  LoadOptions() : delay(DelayDistribution::Fixed(0)) {}
};

// Parses argv (without argv[0]). Errors name the offending flag.
Result<LoadOptions> ParseLoadOptions(const std::vector<std::string>& args);

// The --help text.
std::string LoadUsage();

const char* LoadModeName(LoadMode mode);

// The topic the tool produces to: the target itself in --mode direct, else the delay topic.
const std::string& ProducedTopic(const LoadOptions& options);
const char* HeaderStyleName(HeaderStyle style);

}  // namespace delaybridge::load
