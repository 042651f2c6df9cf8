#include "plugin/partition_assigner.h"

#include <algorithm>
#include <utility>

#include "plugin/clock_step_watch.h"

namespace delaybridge::plugin {

namespace {

constexpr int kCommittedTimeoutMs = 10'000;  // reading the group's offsets
constexpr int kWatermarkTimeoutMs = 5'000;   // asking for a partition's end

std::string OrNone(std::optional<int64_t> v) {
  return v ? std::to_string(*v) : std::string("none");
}

}  // namespace

PartitionAssigner::PartitionAssigner(Settings settings, PartitionStores& stores,
                                     ConsumerControl& consumer, Logger& logger, const Clock& clock)
    : settings_(std::move(settings)),
      stores_(stores),
      consumer_(consumer),
      logger_(logger),
      clock_(clock) {}

Result<std::map<TopicPartitionId, int64_t>> PartitionAssigner::Open(
    const std::vector<TopicPartitionId>& partitions) {
  // exactly_once: an instance that vanished can leave a transaction holding these partitions'
  // offsets open until the broker aborts it (transaction_timeout_ms); the commit is read only
  // once it is settled.
  const int committed_timeout_ms =
      settings_.exactly_once
          ? static_cast<int>(settings_.transaction_timeout_ms) + kCommittedTimeoutMs
          : kCommittedTimeoutMs;
  auto committed = consumer_.Committed(partitions, committed_timeout_ms);
  if (!committed.ok() && settings_.exactly_once) {
    return committed.status().WithContext("assign (exactly_once needs the committed progress)");
  }
  if (!committed.ok()) {
    logger_.Warn(committed.status().ToString() +
                 " (reading starts at the group's committed offsets; the local stores are "
                 "trusted as they are)");
  }
  std::map<TopicPartitionId, int64_t> starts;
  for (const auto& id : partitions) {
    std::optional<CommittedOffset> commit;
    if (committed.ok()) {
      if (auto it = committed->find(id); it != committed->end()) commit = it->second;
    }
    if (Status s = OpenOne(id, commit, &starts); !s.ok()) return s;
  }
  return starts;
}

std::optional<ProgressMetadata> PartitionAssigner::ParseCommitted(
    const TopicPartitionId& id, const std::optional<CommittedOffset>& commit) {
  if (!commit) return std::nullopt;
  auto parsed = ParseProgressMetadata(commit->metadata);
  if (parsed.ok()) return *parsed;
  logger_.Warn("assigned " + id.ToString() + ": " + parsed.status().ToString() +
               " (treated as an offset without progress)");
  return std::nullopt;
}

Status PartitionAssigner::OpenOne(const TopicPartitionId& id,
                                  const std::optional<CommittedOffset>& commit,
                                  std::map<TopicPartitionId, int64_t>* starts) {
  const std::optional<ProgressMetadata> kafka_state = ParseCommitted(id, commit);
  storage::RecoveryReport report;
  auto opened = PartitionStore::Open(id, settings_.storage_dir, settings_.store, clock_.now_ms(),
                                     kafka_state, &report, settings_.exactly_once);
  if (!opened.ok()) return opened.status().WithContext("assign " + id.ToString());
  PartitionStore& store = **opened;
  WarnIfCheckpointAhead(store, clock_.now_ms());
  if (!store.damaged_checkpoint().empty()) {
    logger_.Error("assigned " + id.ToString() + ": " + store.damaged_checkpoint() +
                  ": ignored; delivering from " + ToString(store.start()) +
                  " (records delivered since may be delivered again)");
  }
  const std::optional<int64_t> committed_offset =
      commit ? std::optional<int64_t>(commit->offset) : std::nullopt;
  const std::optional<int64_t> start = store.Resume(committed_offset, kafka_state, clock_.now_ms(),
                                                    (settings_.preload_seconds + 1) * 1000);
  if (start) (*starts)[id] = *start;
  LogAssigned(store, report, committed_offset, kafka_state, start);
  HoldDeliveriesUntilReadToTheEnd(store, start, kafka_state);
  stores_[id] = std::move(opened).value();
  return Status::Ok();
}

void PartitionAssigner::HoldDeliveriesUntilReadToTheEnd(
    PartitionStore& store, std::optional<int64_t> start,
    const std::optional<ProgressMetadata>& kafka_state) {
  const std::string id = store.id().ToString();
  auto marks = consumer_.QueryWatermarks(store.id(), kWatermarkTimeoutMs);
  int64_t end = 0;
  if (marks.ok()) {
    end = marks->high;
    start = std::max(start.value_or(marks->low), marks->low);
  } else if (kafka_state) {
    // At least what the last commit had read.
    end = kafka_state->ingest_position;
    logger_.Warn("assigned " + id + ": " + marks.status().ToString() +
                 "; deliveries wait until reading reaches the committed ingest position " +
                 std::to_string(end) + " instead of the partition's end");
  } else {
    logger_.Warn("assigned " + id + ": " + marks.status().ToString() +
                 "; deliveries start at once (a cancel still to be read may come too late)");
    return;
  }
  if (start && *start >= end) return;  // nothing to read before delivering
  store.HoldDeliveriesUntil(end);
  // Not "assigned <id>": one line per assignment starts so (tests and operators count them).
  logger_.Info(id + ": deliveries wait until reading reaches offset " + std::to_string(end) +
               " (the partition's end at its assignment), so every cancel produced so far is " +
               "read before its target is loaded");
}

void PartitionAssigner::ReleaseDeliveriesWhenReadToTheEnd(PartitionStore& store,
                                                          bool reading_paused) {
  const std::optional<int64_t>& until = store.deliveries_held_until();
  if (!until) return;
  const PartitionProgress& progress = store.progress();
  const std::optional<int64_t> position = consumer_.Position(store.id());
  const bool read = (progress.has_position() && progress.ingest_position() >= *until) ||
                    (position && *position >= *until);
  if (!read && !reading_paused) return;
  const int64_t reached = *until;
  store.ReleaseDeliveries();
  logger_.Info(store.id().ToString() + ": " +
               (read ? "reading reached offset " + std::to_string(reached) + ": delivering"
                     : std::string("reading paused by a store that takes no records: delivering "
                                   "what is stored (a cancel not yet read may come too late)")));
}

void PartitionAssigner::WarnIfCheckpointAhead(const PartitionStore& store, int64_t now_ms) {
  // Up to the preload horizon ahead is normal (the watermark waits at preloaded records).
  const int64_t ahead_ms = store.start().deliver_at_ms - now_ms;
  if (ahead_ms <= (settings_.preload_seconds + 1) * 1000 + kClockStepMs) return;
  logger_.Warn("assigned " + store.id().ToString() + ": its delivered checkpoint " +
               ToString(store.start()) + " is " + std::to_string(ahead_ms) +
               " ms ahead of the clock (the clock stepped back, or the previous owner's clock "
               "runs ahead): " +
               CheckpointAheadConsequence(settings_.exactly_once));
}

void PartitionAssigner::LogAssigned(const PartitionStore& store,
                                    const storage::RecoveryReport& report,
                                    std::optional<int64_t> committed_offset,
                                    const std::optional<ProgressMetadata>& kafka_state,
                                    std::optional<int64_t> start) {
  const std::string id = store.id().ToString();
  logger_.Info("assigned " + id + ": store " + store.dir() + " id=" + store.store_id() + " hours=" +
               std::to_string(report.hours) + " records=" + std::to_string(report.records) +
               " truncated_bytes=" + std::to_string(report.truncated_bytes) + " records_dropped=" +
               std::to_string(report.records_dropped) + " resume_at=" + ToString(store.start()) +
               " committed_offset=" + OrNone(committed_offset) + " reading_from=" + OrNone(start) +
               (store.had_checkpoint() ? " (checkpoint)" : " (no checkpoint)"));
  if (committed_offset && !kafka_state && !store.had_checkpoint() && report.hours == 0) {
    // Committed by a bridge that kept no progress in Kafka (before version 0.2): records still
    // pending in that instance's store below the committed offset are not read again here.
    logger_.Error("assigned " + id + " has committed offset " + std::to_string(*committed_offset) +
                  " without progress metadata and an empty store here: records still pending in "
                  "the store of the instance that committed it are not delivered by this one");
  }
  if (kafka_state && store.reused_after_takeover()) {
    logger_.Info("assigned " + id + ": the group's last commit, from store " +
                 kafka_state->store_id +
                 ", is still the one this store was rebuilt from: reusing it from its checkpoint");
  }
  if (kafka_state && store.rebuilt()) {
    logger_.Warn("assigned " + id + ": the group's last commit came from store " +
                 kafka_state->store_id + ", not this one: rebuilding it from the delay topic, " +
                 "reading offsets " + OrNone(start) + ".." +
                 std::to_string(kafka_state->ingest_position) +
                 " again and skipping what was delivered before " +
                 std::to_string(kafka_state->checkpoint_ms) + " ms (late or dead-lettered " +
                 "records below offset " + std::to_string(kafka_state->late_below) + ")");
  }
  for (const auto& problem : report.problems) {
    logger_.Warn("recovery of " + id + ": " + problem.file + " at byte " +
                 std::to_string(problem.offset) + ": " + problem.what);
  }
}

}  // namespace delaybridge::plugin
