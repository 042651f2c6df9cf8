#include "tools/load/load_report.h"

#include <cstdio>
#include <string>

namespace delaybridge::load {

namespace {

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  return buffer;
}

std::string Ms(int64_t us) { return Fixed(static_cast<double>(us) / 1000.0, 3); }

std::string LatenessJson(const LatenessHistogram& histogram) {
  return "{\"count\":" + std::to_string(histogram.count()) +
         ",\"early\":" + std::to_string(histogram.early_count()) +
         ",\"min\":" + Ms(histogram.min()) + ",\"mean\":" + Fixed(histogram.mean() / 1000, 3) +
         ",\"p50\":" + Ms(histogram.Percentile(50)) + ",\"p90\":" + Ms(histogram.Percentile(90)) +
         ",\"p99\":" + Ms(histogram.Percentile(99)) +
         ",\"p999\":" + Ms(histogram.Percentile(99.9)) + ",\"max\":" + Ms(histogram.max()) + "}";
}

std::string LatenessText(const char* name, const LatenessHistogram& histogram) {
  return std::string(name) + " (ms, n=" + std::to_string(histogram.count()) + "): p50 " +
         Ms(histogram.Percentile(50)) + "  p90 " + Ms(histogram.Percentile(90)) + "  p99 " +
         Ms(histogram.Percentile(99)) + "  p99.9 " + Ms(histogram.Percentile(99.9)) + "  max " +
         Ms(histogram.max()) + "  min " + Ms(histogram.min()) + "\n";
}

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int LoadReport::ExitCode() const {
  const bool clean = produce_failed == 0 && lost == 0 && duplicates == 0 && early == 0 &&
                     (!group_waited || group_caught_up);
  return clean ? 0 : 1;
}

std::string FormatText(const LoadReport& r) {
  std::string out;
  out += "mode " + r.mode + "  bootstrap " + r.bootstrap + "  delay " + r.delay_spec +
         "  headers " + r.header_style + "  payload " + std::to_string(r.payload_bytes) +
         " B  target rate " + (r.target_rate_per_s > 0 ? Fixed(r.target_rate_per_s, 0) : "max") +
         "/s\n";
  out += "produced " + std::to_string(r.produced) + " of " + std::to_string(r.attempted) +
         " (failed " + std::to_string(r.produce_failed) + ") in " + Fixed(r.produce_seconds, 3) +
         " s = " + Fixed(r.produce_rate_per_s, 0) + " rec/s\n";
  out += LatenessText("produce to acknowledgement", r.produce_ack_latency);
  if (r.group_waited) {
    out += std::string("group caught up: ") + (r.group_caught_up ? "yes" : "NO") + " after " +
           std::to_string(r.group_wait_ms) + " ms\n";
  }
  if (!r.consumed) return out;
  out += "delivered " + std::to_string(r.delivered) + "  lost " + std::to_string(r.lost) +
         "  pending " + std::to_string(r.pending) + "  duplicates " + std::to_string(r.duplicates) +
         "  early " + std::to_string(r.early) + "  foreign " + std::to_string(r.foreign) + "\n";
  out += "delivery rate " + Fixed(r.delivery_rate_per_s, 0) +
         " rec/s (from earliest deliver-at), " + Fixed(r.delivery_window_rate_per_s, 0) +
         " rec/s (first to last arrival)\n";
  out += LatenessText("lateness by consume time", r.consume_lateness);
  out += LatenessText(("lateness by broker timestamp [" + r.broker_timestamp_type + "]").c_str(),
                      r.broker_lateness);
  return out;
}

std::string FormatJson(const LoadReport& r) {
  std::string out = "{";
  out += "\"mode\":" + Quoted(r.mode) + ",\"bootstrap\":" + Quoted(r.bootstrap) +
         ",\"delay\":" + Quoted(r.delay_spec) + ",\"headers\":" + Quoted(r.header_style) +
         ",\"payload_bytes\":" + std::to_string(r.payload_bytes) +
         ",\"target_rate_per_s\":" + Fixed(r.target_rate_per_s, 1) +
         ",\"run_id\":" + std::to_string(r.run_id);
  out += ",\"attempted\":" + std::to_string(r.attempted) +
         ",\"produced\":" + std::to_string(r.produced) +
         ",\"produce_failed\":" + std::to_string(r.produce_failed) +
         ",\"produce_seconds\":" + Fixed(r.produce_seconds, 3) +
         ",\"produce_rate_per_s\":" + Fixed(r.produce_rate_per_s, 1) +
         ",\"first_send_ms\":" + std::to_string(r.first_send_ms) +
         ",\"last_send_ms\":" + std::to_string(r.last_send_ms) +
         ",\"due_at_ms\":" + std::to_string(r.due_at_ms);
  if (r.group_waited) {
    out += ",\"group_caught_up\":" + std::string(r.group_caught_up ? "true" : "false") +
           ",\"group_wait_ms\":" + std::to_string(r.group_wait_ms);
  }
  out += ",\"consumed\":" + std::string(r.consumed ? "true" : "false");
  if (r.consumed) {
    out += ",\"delivered\":" + std::to_string(r.delivered) + ",\"lost\":" + std::to_string(r.lost) +
           ",\"pending\":" + std::to_string(r.pending) +
           ",\"duplicates\":" + std::to_string(r.duplicates) +
           ",\"early\":" + std::to_string(r.early) +
           ",\"early_by_consume_time\":" + std::to_string(r.early_by_consume_time) +
           ",\"early_by_append_time\":" + std::to_string(r.early_by_append_time) +
           ",\"foreign\":" + std::to_string(r.foreign) +
           ",\"delivery_rate_per_s\":" + Fixed(r.delivery_rate_per_s, 1) +
           ",\"delivery_window_rate_per_s\":" + Fixed(r.delivery_window_rate_per_s, 1) +
           ",\"first_delivery_ms\":" + std::to_string(r.first_delivery_ms) +
           ",\"last_delivery_ms\":" + std::to_string(r.last_delivery_ms) +
           ",\"waited_ms\":" + std::to_string(r.waited_ms) +
           ",\"broker_timestamp_type\":" + Quoted(r.broker_timestamp_type) +
           ",\"lateness_consume_ms\":" + LatenessJson(r.consume_lateness) +
           ",\"lateness_broker_ms\":" + LatenessJson(r.broker_lateness);
  }
  // Last, with the other histograms: their "count" and "early" fields must not come before the
  // top-level ones a flat reader looks up first.
  out += ",\"produce_ack_ms\":" + LatenessJson(r.produce_ack_latency);
  out += ",\"exit_code\":" + std::to_string(r.ExitCode()) + "}";
  return out;
}

}  // namespace delaybridge::load
