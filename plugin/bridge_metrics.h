// BridgeMetrics: what the bridge's /metrics endpoint exposes, gathered on the event-loop thread
// at each scrape, and RenderMetrics, its Prometheus text (docs/operations.md, "Metrics", lists
// every family). Counters count since the process started; gauges are the values of the moment.
//
// Thread-safety: plain values; the histograms are borrowed from the bridge for the call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/lateness_histogram.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

struct PartitionMetrics {
  TopicPartitionId id;
  // Records of the delay topic not yet read: the partition's end minus the next offset to read;
  // nullopt until both are known.
  std::optional<int64_t> consumer_lag_records;
  // Every record placed before this time (ms) is delivered: the delivered checkpoint.
  int64_t delivered_until_ms = 0;
  // The time (ms) of the oldest record in memory waiting for its delivery; nullopt when none is.
  std::optional<int64_t> oldest_pending_ms;
  // Records in the partition's DelayLog placed in the delivered watermark's second or later: an
  // upper bound on those still to deliver (deliveries past the watermark, which waits for the
  // oldest unacknowledged record, count until it passes them); nullopt when the store could not
  // read its head table.
  std::optional<uint64_t> records_pending;
  // Bytes of the partition's DelayLog files.
  uint64_t store_bytes = 0;
};

struct BridgeMetrics {
  std::string version;

  uint64_t consumed = 0;
  uint64_t stored = 0;
  uint64_t delivered = 0;
  uint64_t delivery_retries = 0;
  uint64_t delivery_queue_full = 0;  // produce attempts refused by the producer's full queue
  uint64_t rejected = 0;         // dead-lettered at ingest (a header, a size, a target not allowed)
  uint64_t refused = 0;          // dead-lettered because the target refused the delivery for good
  uint64_t cancelled = 0;        // cancels whose target was pending: never delivered
  uint64_t cancel_too_late = 0;  // cancels whose target was delivered already
  uint64_t cancel_unknown = 0;   // cancels naming no record the store holds
  uint64_t dead_letters_reduced = 0;
  uint64_t dead_letters_dropped = 0;
  uint64_t corrupt_records = 0;
  uint64_t append_failures = 0;
  uint64_t sync_failures = 0;
  uint64_t preload_retries = 0;
  uint64_t clock_steps_back = 0;
  bool exactly_once = false;
  uint64_t transactions = 0;
  uint64_t transactions_aborted = 0;

  uint64_t in_memory = 0;
  uint64_t in_wheel = 0;
  uint64_t in_flight = 0;
  uint64_t held = 0;  // consumed, waiting for a store that could not take them
  std::vector<PartitionMetrics> partitions;

  // Delivery lateness after the requested time, ms, of every acknowledged delivery.
  const LatenessHistogram* lateness_ms = nullptr;
  // Group commits (the fdatasyncs of every store with new appends), microseconds.
  const LatenessHistogram* group_commit_us = nullptr;
};

std::string RenderMetrics(const BridgeMetrics& metrics);

}  // namespace delaybridge::plugin
