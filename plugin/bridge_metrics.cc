#include "plugin/bridge_metrics.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "plugin/prometheus_text.h"

namespace delaybridge::plugin {

namespace {

// Seconds: from on time to five minutes late, the range delay-queue SLOs are written in.
const std::vector<double>& LatenessBoundsSeconds() {
  static const std::vector<double> bounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,  5,     10,   30,  60,   300};
  return bounds;
}

// Seconds: a group commit is an fdatasync of every store with new appends.
const std::vector<double>& GroupCommitBoundsSeconds() {
  static const std::vector<double> bounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,   0.25,   0.5,   1,    2.5,   10};
  return bounds;
}

void Counter(PrometheusText& out, const char* name, const char* help, uint64_t value) {
  out.Family(name, "counter", help);
  out.Sample(name, static_cast<double>(value));
}

void Gauge(PrometheusText& out, const char* name, const char* help, uint64_t value) {
  out.Family(name, "gauge", help);
  out.Sample(name, static_cast<double>(value));
}

// A histogram of integer samples in units of 1/units_per_second s, exposed in seconds. A sample
// is at most a bound when it is at most the bound's whole units.
void SecondsHistogram(PrometheusText& out, const char* name, const char* help,
                      const std::vector<double>& bounds, const LatenessHistogram* samples,
                      double units_per_second) {
  out.Family(name, "histogram", help);
  const LatenessHistogram empty;
  const LatenessHistogram& h = samples != nullptr ? *samples : empty;
  std::vector<uint64_t> at_most;
  for (double bound : bounds) {
    const auto units = static_cast<int64_t>(std::floor(bound * units_per_second + 1e-6));
    at_most.push_back(static_cast<uint64_t>(h.CountAtMost(units)));
  }
  out.Histogram(name, {}, bounds, at_most, h.sum_early_as_zero() / units_per_second,
                static_cast<uint64_t>(h.count()));
}

PrometheusText::Labels PartitionLabels(const TopicPartitionId& id) {
  return {{"topic", id.topic}, {"partition", std::to_string(id.partition)}};
}

// One gauge family with a sample per partition; value returns nullopt for a partition with no
// sample (the series is then absent, which Prometheus tells apart from 0).
template <typename Value>
void PartitionGauge(PrometheusText& out, const std::string& name, const std::string& help,
                    const std::vector<PartitionMetrics>& partitions, Value value) {
  out.Family(name, "gauge", help);
  for (const auto& p : partitions) {
    if (std::optional<double> v = value(p)) out.Sample(name, PartitionLabels(p.id), *v);
  }
}

std::optional<double> ToDouble(const auto& optional, double divisor = 1.0) {
  if (!optional) return std::nullopt;
  return static_cast<double>(*optional) / divisor;
}

void PartitionFamilies(PrometheusText& out, const std::vector<PartitionMetrics>& partitions) {
  PartitionGauge(out, "delaybridge_consumer_lag_records",
                 "Records of the delay-topic partition not yet read by the bridge.", partitions,
                 [](const PartitionMetrics& p) { return ToDouble(p.consumer_lag_records); });
  PartitionGauge(out, "delaybridge_delivered_until_seconds",
                 "Every record of the partition due before this Unix time is delivered.",
                 partitions, [](const PartitionMetrics& p) {
                   return std::optional<double>(static_cast<double>(p.delivered_until_ms) / 1000.0);
                 });
  PartitionGauge(out, "delaybridge_oldest_pending_deliver_at_seconds",
                 "Unix time the oldest record in memory waiting for delivery is due (absent when "
                 "none waits).",
                 partitions,
                 [](const PartitionMetrics& p) { return ToDouble(p.oldest_pending_ms, 1000.0); });
  PartitionGauge(out, "delaybridge_records_pending",
                 "Records in the partition's DelayLog placed at or after the delivered "
                 "watermark's second: an upper bound on those not yet delivered.",
                 partitions, [](const PartitionMetrics& p) { return ToDouble(p.records_pending); });
  PartitionGauge(out, "delaybridge_store_bytes", "Bytes of the partition's DelayLog files.",
                 partitions, [](const PartitionMetrics& p) {
                   return std::optional<double>(static_cast<double>(p.store_bytes));
                 });
}

}  // namespace

std::string RenderMetrics(const BridgeMetrics& m) {
  PrometheusText out;
  out.Family("delaybridge_build_info", "gauge", "The running DelayBridge version; always 1.");
  out.Sample("delaybridge_build_info", {{"version", m.version}}, 1);

  Counter(out, "delaybridge_records_consumed_total", "Records read from the delay topics.",
          m.consumed);
  Counter(out, "delaybridge_records_stored_total", "Records appended to a DelayLog store.",
          m.stored);
  Counter(out, "delaybridge_records_delivered_total",
          "Records delivered to their target topic and acknowledged.", m.delivered);
  out.Family("delaybridge_records_dead_lettered_total", "counter",
             "Records sent to the dead-letter topic: rejected at ingest (a header, the size, a "
             "target not allowed) or refused for good by their target.");
  out.Sample("delaybridge_records_dead_lettered_total", {{"reason", "rejected"}},
             static_cast<double>(m.rejected));
  out.Sample("delaybridge_records_dead_lettered_total", {{"reason", "refused"}},
             static_cast<double>(m.refused));
  out.Family("delaybridge_cancels_total", "counter",
             "Cancels (x-delay-cancel) read, by result: cancelled (the target was pending and is "
             "never delivered), too_late (it was delivered already), unknown (no such record).");
  out.Sample("delaybridge_cancels_total", {{"result", "cancelled"}},
             static_cast<double>(m.cancelled));
  out.Sample("delaybridge_cancels_total", {{"result", "too_late"}},
             static_cast<double>(m.cancel_too_late));
  out.Sample("delaybridge_cancels_total", {{"result", "unknown"}},
             static_cast<double>(m.cancel_unknown));
  Counter(out, "delaybridge_dead_letters_reduced_total",
          "Dead letters refused whole and sent without value and headers.", m.dead_letters_reduced);
  Counter(out, "delaybridge_dead_letters_dropped_total",
          "Reduced dead letters refused too: logged and given up.", m.dead_letters_dropped);
  Counter(out, "delaybridge_delivery_retries_total",
          "Deliveries produced again after a transient error.", m.delivery_retries);
  Counter(out, "delaybridge_delivery_queue_full_total",
          "Produce attempts the producer's full queue refused; the record waited 10 ms.",
          m.delivery_queue_full);
  Counter(out, "delaybridge_corrupt_records_total",
          "Stored records skipped because their checksum or encoding failed.", m.corrupt_records);
  Counter(out, "delaybridge_append_failures_total",
          "Appends a store could not take (full disk, no descriptors); the record waited.",
          m.append_failures);
  Counter(out, "delaybridge_sync_failures_total",
          "Group-commit syncs that could not start; retried at the next one.", m.sync_failures);
  Counter(out, "delaybridge_preload_retries_total",
          "Preloader walks stopped at a second that could not be read for now.", m.preload_retries);
  Counter(out, "delaybridge_clock_steps_back_total", "Wall-clock steps back of a second or more.",
          m.clock_steps_back);
  if (m.exactly_once) {
    Counter(out, "delaybridge_transactions_total", "Transactions committed (exactly_once).",
            m.transactions);
    Counter(out, "delaybridge_transactions_aborted_total",
            "Transactions aborted, stores reloaded (exactly_once).", m.transactions_aborted);
  }

  Gauge(out, "delaybridge_records_in_memory",
        "Records handed to the delivery thread and not yet acknowledged.", m.in_memory);
  Gauge(out, "delaybridge_records_in_wheel", "Records waiting in the timing wheel.", m.in_wheel);
  Gauge(out, "delaybridge_records_in_flight", "Records produced, not yet acknowledged.",
        m.in_flight);
  Gauge(out, "delaybridge_records_held",
        "Records consumed and waiting for a store that cannot take them now.", m.held);
  Gauge(out, "delaybridge_partitions_assigned", "Delay-topic partitions this instance owns.",
        m.partitions.size());
  PartitionFamilies(out, m.partitions);

  SecondsHistogram(out, "delaybridge_delivery_lateness_seconds",
                   "Acknowledged delivery minus the time the record asked for.",
                   LatenessBoundsSeconds(), m.lateness_ms, 1e3);
  SecondsHistogram(out, "delaybridge_group_commit_seconds",
                   "Group commits: the fdatasyncs of every store with new appends, all at once.",
                   GroupCommitBoundsSeconds(), m.group_commit_us, 1e6);
  return out.Take();
}

}  // namespace delaybridge::plugin
