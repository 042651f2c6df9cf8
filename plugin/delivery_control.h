// DeliveryControl: what a revocation needs from the delivery thread (Deliverer): release the
// revoked partitions' records, let production go on after a transaction cut left it holding,
// and take the acknowledgements to apply before the stores close. An interface, so the
// revocation's ordering is unit-tested with a fake that records the order of calls.
//
// Thread-safety: every method is called from the owner's thread (the bridge's event loop).
#pragma once

#include <cstddef>
#include <vector>

#include "plugin/ack_batch.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class DeliveryControl {
 public:
  struct ReleaseResult {
    bool flushed =
        true;  // every produced record of the stores was acknowledged (or failed) in time
    size_t released = 0;  // records of the stores dropped from memory
  };

  virtual ~DeliveryControl() = default;

  // Stops producing these stores' records, waits (up to flush_timeout_ms) for the
  // acknowledgements of those already produced, then forgets every record of these stores.
  // Blocks the caller until done.
  virtual ReleaseResult Release(const std::vector<TopicPartitionId>& stores,
                                int flush_timeout_ms) = 0;
  // exactly_once: produces again after a transaction cut that left production stopped.
  virtual void Resume() = 0;
  // The acknowledgements since the last call.
  virtual AckBatch TakeAcks() = 0;
};

}  // namespace delaybridge::plugin
