// RunLoad: one delaybridge-load run from start to report: (optionally) start the embedded
// cluster and create topics, capture the target's end offsets, start the consumer (and the
// passthrough pipe), produce, wait for deliveries, and tally.
//
// Thread-safety: call from one thread; it starts and joins its own consumer and pipe threads.
#pragma once

#include <memory>

#include "core/status.h"
#include "plugin/embedded_cluster.h"
#include "tools/load/load_options.h"
#include "tools/load/load_report.h"

namespace delaybridge::load {

Result<LoadReport> RunLoad(const LoadOptions& options);

// Starts librdkafka's mock cluster (--bootstrap embedded) with the delay and target topics, and
// prints its address on stderr.
Result<std::unique_ptr<plugin::EmbeddedCluster>> StartEmbeddedCluster(const LoadOptions& options);

}  // namespace delaybridge::load
