// PartitionAssigner: opens the stores of partitions the group assigns to this instance and
// decides where reading starts and when each store may deliver. The group's committed progress
// (the offset's metadata, plugin/progress_metadata.h) says what the previous owner delivered;
// the store is recovered (or rebuilt when it is not the store that progress came from) and
// resumed from it. A new store delivers nothing until reading has reached the partition's end
// as of its assignment, so every cancel produced before then is read before its target is
// loaded. The revocation's counterpart is PartitionRevoker.
//
// Thread-safety: one owner thread (the bridge's event loop, inside the consumer's rebalance
// callback).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "plugin/consumer_control.h"
#include "plugin/log.h"
#include "plugin/partition_store.h"
#include "plugin/progress_metadata.h"
#include "storage/delay_log_store.h"

namespace delaybridge::plugin {

class PartitionAssigner {
 public:
  struct Settings {
    std::string storage_dir;
    storage::StoreOptions store;
    bool exactly_once = false;
    int64_t transaction_timeout_ms = 0;  // exactly_once: how long a vanished owner's lasts
    int64_t preload_seconds = 0;
  };

  PartitionAssigner(Settings settings, PartitionStores& stores, ConsumerControl& consumer,
                    Logger& logger, const Clock& clock);

  // Opens (or rebuilds) the stores of these partitions from the group's committed progress and
  // adds them to the stores; returns where reading starts (a partition left out starts at its
  // committed offset). An error: a store could not be opened, or exactly_once could not read
  // the committed progress (guessing it could deliver a record twice); the stores opened before
  // stay.
  Result<std::map<TopicPartitionId, int64_t>> Open(const std::vector<TopicPartitionId>& partitions);

  // Lets a store deliver once reading reached the partition's end as of its assignment, or at
  // once while reading is paused by a store that takes no records (what is stored must still be
  // delivered, and its hours deleted, which makes room).
  void ReleaseDeliveriesWhenReadToTheEnd(PartitionStore& store, bool reading_paused);

 private:
  // What the group committed for id, parsed; nullopt when nothing or no progress.
  std::optional<ProgressMetadata> ParseCommitted(const TopicPartitionId& id,
                                                 const std::optional<CommittedOffset>& commit);
  Status OpenOne(const TopicPartitionId& id, const std::optional<CommittedOffset>& commit,
                 std::map<TopicPartitionId, int64_t>* starts);
  void WarnIfCheckpointAhead(const PartitionStore& store, int64_t now_ms);
  // start: where reading starts, when known.
  void HoldDeliveriesUntilReadToTheEnd(PartitionStore& store, std::optional<int64_t> start,
                                       const std::optional<ProgressMetadata>& kafka_state);
  void LogAssigned(const PartitionStore& store, const storage::RecoveryReport& report,
                   std::optional<int64_t> committed_offset,
                   const std::optional<ProgressMetadata>& kafka_state,
                   std::optional<int64_t> start);

  const Settings settings_;
  PartitionStores& stores_;
  ConsumerControl& consumer_;
  Logger& logger_;
  const Clock& clock_;
};

}  // namespace delaybridge::plugin
