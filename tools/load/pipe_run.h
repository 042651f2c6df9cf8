// RunPipe: delaybridge-load --mode pipe, the pass-through pipe (passthrough_pipe.h) as a process
// of its own, so that a benchmark reads the pipe's CPU time apart from the load producer and the
// measuring consumer, exactly as it reads the bridge's. The load is then run with --mode bridge
// against it. Same pipe, same clients and settings as --mode passthrough; no --due-together hold.
//
// Thread-safety: call from one thread; it starts and joins the pipe's thread. `stop` may be set
// from any thread or a signal handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/status.h"
#include "tools/load/load_options.h"

namespace delaybridge::load {

struct PipeReport {
  std::string bootstrap;
  std::string delay_topic;
  std::string target_topic;
  int64_t forwarded = 0;  // records produced to the target topic and flushed
  int64_t run_ms = 0;     // from ready to stop
};

// Forwards records written to the delay topic from now on until `stop` is set or
// options.duration_ms (> 0) has passed since it became ready, then flushes. `on_ready` is called
// with the bootstrap servers once the pipe's consumer is positioned, i.e. from when every record
// produced is forwarded.
Result<PipeReport> RunPipe(const LoadOptions& options, const std::atomic<bool>& stop,
                           const std::function<void(const std::string& bootstrap)>& on_ready);

std::string FormatPipeText(const PipeReport& report);
std::string FormatPipeJson(const PipeReport& report);

}  // namespace delaybridge::load
