// Dead letter: the record the bridge writes to dead_letter_topic for a rejected input. It
// keeps the original key, value and every original header (x-delay ones included, so the
// producer can see what it sent), and adds x-delay-error: <reason> and
// x-delay-source: <topic>/<partition>/<offset>.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "plugin/delayed_record.h"
#include "plugin/ingest.h"

namespace delaybridge::plugin {

// Returns the record to produce; its target_topic is dead_letter_topic.
DelayedRecord MakeDeadLetter(const IncomingRecord& in, const std::string& reason,
                             const std::string& dead_letter_topic);

}  // namespace delaybridge::plugin
