// LoadReport: the outcome of one delaybridge-load run, and its text and JSON renderings.
//
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <string>

#include "core/lateness_histogram.h"
#include "tools/load/load_options.h"

namespace delaybridge::load {

struct LoadReport {
  std::string mode;
  std::string bootstrap;
  std::string delay_spec;
  std::string header_style;
  int64_t payload_bytes = 0;
  double target_rate_per_s = 0;
  uint64_t run_id = 0;

  int64_t attempted = 0;       // records handed to the producer
  int64_t produced = 0;        // acknowledged by the broker
  int64_t produce_failed = 0;  // reported failed by the producer
  bool consumed = false;       // false with --no-consume: the delivery fields are empty
  int64_t delivered = 0;       // distinct records of this run that arrived
  int64_t lost = 0;            // acknowledged, due more than lost_grace_ms before the end, absent
  int64_t pending = 0;         // acknowledged, absent, not due yet (or due within the grace)
  int64_t duplicates = 0;
  int64_t foreign = 0;
  int64_t early = 0;
  int64_t early_by_consume_time = 0;
  int64_t early_by_append_time = 0;
  std::string broker_timestamp_type;  // LogAppendTime, CreateTime, mixed or none

  double produce_seconds = 0;
  double produce_rate_per_s = 0;          // acknowledged records / produce span
  double delivery_rate_per_s = 0;         // delivered / (last arrival - earliest deliver-at)
  double delivery_window_rate_per_s = 0;  // delivered / (last arrival - first arrival)
  int64_t first_send_ms = 0;
  int64_t last_send_ms = 0;
  int64_t due_at_ms = 0;  // --due-together: the shared deliver-at
  int64_t first_delivery_ms = 0;
  int64_t last_delivery_ms = 0;
  int64_t waited_ms = 0;  // time spent waiting for deliveries after producing

  bool group_waited = false;
  bool group_caught_up = false;
  int64_t group_wait_ms = 0;

  LatenessHistogram produce_ack_latency;  // produce call to acknowledgement (delay topic)
  LatenessHistogram consume_lateness;
  LatenessHistogram broker_lateness;

  // 0 when every awaited record arrived exactly once and none early, else 1.
  int ExitCode() const;
};

std::string FormatText(const LoadReport& report);
std::string FormatJson(const LoadReport& report);

}  // namespace delaybridge::load
