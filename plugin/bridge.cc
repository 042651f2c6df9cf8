#include "plugin/bridge.h"

#include <signal.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <thread>

#include "plugin/dead_letter.h"
#include "plugin/preloader.h"
#include "plugin/progress_metadata.h"
#include "storage/format.h"

namespace delaybridge::plugin {

namespace {

using std::chrono::milliseconds;

constexpr size_t kConsumeBatch = 1000;          // records per drain before yielding the loop
constexpr int64_t kPreloadIntervalMs = 100;     // preloader walk period
constexpr int64_t kSafetyPollIntervalMs = 100;  // in case an eventfd wake-up was missed
constexpr int kFlushTimeoutMs = 10'000;         // revoke/shutdown wait for acknowledgements
constexpr int kCommittedTimeoutMs = 10'000;     // assign: reading the group's offsets
constexpr int kWatermarkTimeoutMs = 5'000;      // assign: asking for a partition's end
constexpr int64_t kAfterRollbackMs = 1000;      // the next cut after an aborted transaction
constexpr int64_t kHeldRetryMinMs = 100;        // held records: first retry of the store
constexpr int64_t kHeldRetryMaxMs = 5'000;      // held records: back-off cap
constexpr int64_t kClockStepMs = 1'000;         // a wall-clock step back this large is reported
constexpr int64_t kDeliveryAnswerMs = 2'000;    // /healthz, /metrics: the delivery thread's answer
constexpr int kBrokerProbeTimeoutMs = 2'000;  // /readyz: a metadata request after brokers went down
// A step back this large stops the bridge: librdkafka's threads wait for deadlines on the wall
// clock (librdkafka issue #2145), so its producer and consumer can stall for as long as the step.
constexpr int64_t kClockStepStopMs = 30'000;

// What a store's files take on disk; 0 when the directory cannot be read (a metric is no reason
// to stop).
uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::error_code size_error;
    const uintmax_t size = it->is_regular_file(size_error) ? it->file_size(size_error) : 0;
    if (!size_error) bytes += size;
  }
  return bytes;
}

// "count=N p50=Xms p99=Yms max=Zms early=E" for the stats line.
std::string LatenessSummaryMs(const LatenessHistogram& h) {
  return "count=" + std::to_string(h.count()) + " p50=" + std::to_string(h.Percentile(50)) +
         "ms p99=" + std::to_string(h.Percentile(99)) + "ms max=" + std::to_string(h.max()) +
         "ms early=" + std::to_string(h.early_count());
}

}  // namespace

Bridge::Bridge(const BridgeConfig& config, std::string bootstrap_servers, Logger& logger,
               const Clock& clock)
    : config_(config),
      bootstrap_servers_(std::move(bootstrap_servers)),
      logger_(logger),
      clock_(clock),
      signals_(io_, SIGINT, SIGTERM),
      commit_timer_(io_),
      preload_timer_(io_),
      checkpoint_timer_(io_),
      progress_timer_(io_),
      transaction_timer_(io_),
      stats_timer_(io_),
      safety_poll_timer_(io_),
      held_retry_timer_(io_),
      warnings_(logger, clock),
      disk_(io_) {
  policy_.delay.max_delay_ms = config_.max_delay_ms;
  policy_.delay.allowed_targets = &config_.allowed_targets;
  policy_.max_record_bytes = config_.max_record_bytes;
}

Bridge::~Bridge() { JoinBrokerProbe(); }

int Bridge::Run() {
  // An address that cannot be served is the operator's to fix: exit 2, no restart loop.
  if (Status s = StartHttp(); !s.ok()) {
    logger_.Error(s.ToString());
    return 2;
  }
  if (Status s = Start(); !s.ok()) {
    logger_.Error("start failed: " + s.ToString());
    return 1;
  }
  io_.run();
  Shutdown();
  return exit_code_;
}

Status Bridge::Start() {
  std::map<std::string, std::string> kafka = config_.kafka;
  kafka["bootstrap.servers"] = bootstrap_servers_;
  if (!config_.kafka_stats_file.empty()) {
    auto stats = KafkaStatsFile::Open(config_.kafka_stats_file, logger_, clock_);
    if (!stats.ok()) return stats.status();
    kafka_stats_ = std::move(stats).value();
  }
  Deliverer::Callbacks callbacks;
  callbacks.on_acks = [this] { boost::asio::post(io_, [this] { ApplyAcks(); }); };
  callbacks.on_fatal = [this](const Status& s) { boost::asio::post(io_, [this, s] { Fail(s); }); };
  callbacks.on_transaction_full = [this] {
    boost::asio::post(io_, [this] { OnTransactionTimer(); });
  };
  const std::string instance_id =
      config_.group_instance_id.value_or(DefaultGroupInstanceId(config_.storage_dir));
  Deliverer::Options delivery;
  delivery.kafka = kafka;
  delivery.kafka["message.max.bytes"] = std::to_string(config_.producer_message_max_bytes);
  delivery.tick_ms = config_.tick_ms;
  delivery.stats = kafka_stats_.get();
  delivery.dead_letter_topic = config_.dead_letter_topic;
  if (config_.exactly_once()) {
    // Stable per instance, so a restart fences its previous incarnation (KIP-98); fencing an
    // instance that lost its partitions is the group metadata's job (KIP-447).
    delivery.transactions.transactional_id =
        config_.group_id + "-" +
        (instance_id.empty() ? DefaultGroupInstanceId(config_.storage_dir) : instance_id);
    delivery.transactions.timeout_ms = static_cast<int>(config_.transaction_timeout_ms);
    delivery.transaction_max_records = config_.transaction_max_records;
  }
  auto deliverer = Deliverer::Start(delivery, logger_, clock_, callbacks);
  if (!deliverer.ok()) return deliverer.status();
  deliverer_ = std::move(deliverer).value();
  auto consumer = SourceConsumer::Create(kafka, config_.group_id, instance_id, logger_, *this,
                                         kafka_stats_.get());
  if (!consumer.ok()) return consumer.status();
  consumer_ = std::move(consumer).value();
  committer_ = std::make_unique<OffsetCommitter>(stores_, disk_, *consumer_, logger_, warnings_,
                                                 [this](const Status& s) { Fail(s); });
  if (config_.exactly_once()) {
    TransactionCutter::Hooks hooks;
    hooks.apply_acks = [this](const AckBatch& acks) { ApplyAckBatch(acks); };
    hooks.reopen_stores = [this](const std::vector<TopicPartitionId>& dropped,
                                 const std::vector<TopicPartitionId>& reload) {
      return ReopenStores(dropped, reload);
    };
    hooks.fail = [this](const Status& s) { Fail(s); };
    cutter_ = std::make_unique<TransactionCutter>(
        stores_, disk_, *deliverer_, *consumer_, *committer_, std::move(hooks), logger_, clock_,
        kFlushTimeoutMs, static_cast<int>(config_.transaction_timeout_ms));
  }
  revoker_ = std::make_unique<PartitionRevoker>(
      stores_, disk_, *deliverer_, *committer_, cutter_.get(),
      [this](const AckBatch& acks) { ApplyAckBatch(acks); }, logger_, clock_, kFlushTimeoutMs);

  auto consumer_wakeup = consumer_->MakeWakeup(io_);
  if (!consumer_wakeup.ok()) return consumer_wakeup.status();
  consumer_wakeup_ = std::move(consumer_wakeup).value();

  std::vector<std::string> topics;
  for (const auto& [from, to] : config_.routes) topics.push_back(from);
  if (Status s = consumer_->Subscribe(topics); !s.ok()) return s;

  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    logger_.Info(std::string("received ") + (signal == SIGTERM ? "SIGTERM" : "SIGINT") +
                 ": shutting down");
    io_.stop();
  });
  ArmConsumerWakeup();
  Every(commit_timer_, milliseconds(config_.sync_interval_ms),
        [this] { committer_->GroupCommit(); });
  Every(preload_timer_, milliseconds(kPreloadIntervalMs), [this] { Preload(); });
  Every(checkpoint_timer_, milliseconds(config_.checkpoint_interval_ms),
        [this] { PersistCheckpoints(); });
  if (config_.exactly_once()) {
    ScheduleTransaction(milliseconds(config_.transaction_interval_ms));
  } else {
    Every(progress_timer_, milliseconds(config_.checkpoint_interval_ms),
          [this] { committer_->CommitProgress(clock_.now_ms()); });
  }
  Every(stats_timer_, milliseconds(config_.stats_interval_s * 1000), [this] { LogStats(); });
  Every(safety_poll_timer_, milliseconds(kSafetyPollIntervalMs), [this] { DrainConsumer(); });
  logger_.Info(
      "bridge started: consuming " + std::to_string(topics.size()) + " delay topic(s) as group " +
      config_.group_id + (instance_id.empty() ? std::string() : " member " + instance_id) +
      " from " + bootstrap_servers_ +
      (config_.exactly_once()
           ? ", exactly once (transactional.id " + delivery.transactions.transactional_id + ")"
           : ", at least once"));
  return Status::Ok();
}

// Clean shutdown: stop consuming, then leaving the group revokes every partition, and
// revocation syncs, flushes, commits and checkpoints each store (OnRevoked).
void Bridge::Shutdown() {
  stopping_ = true;
  http_.reset();      // the loop no longer runs: stop accepting connections it would not serve
  JoinBrokerProbe();  // it uses the consumer, closed next
  consumer_->Close();
  if (!stores_.empty()) {
    // The group could not be left cleanly (broker unreachable): close the stores anyway.
    std::vector<TopicPartitionId> ids;
    for (const auto& [id, store] : stores_) ids.push_back(id);
    OnRevoked(ids, false);
  }
  LogStats();
  deliverer_->Stop(kFlushTimeoutMs);  // waits for the dead letters still in flight
  logger_.Info(exit_code_ == 0 ? "bridge stopped cleanly" : "bridge stopped after an error");
}

void Bridge::Fail(const Status& status) {
  logger_.Error(status.ToString());
  exit_code_ = 1;
  io_.stop();
}

void Bridge::Every(boost::asio::steady_timer& timer, milliseconds period,
                   std::function<void()> step) {
  timer.expires_after(period);
  timer.async_wait(
      [this, &timer, period, step = std::move(step)](const boost::system::error_code& ec) mutable {
        if (ec) return;
        step();
        Every(timer, period, std::move(step));
      });
}

// ---- consumer side ----

void Bridge::ArmConsumerWakeup() {
  if (consumer_wakeup_armed_) return;
  consumer_wakeup_armed_ = true;
  consumer_wakeup_->Arm([this] {
    consumer_wakeup_armed_ = false;
    DrainConsumer();
  });
}

// Records accepted for a second that is already preloaded go to memory at once, so a backlog
// of overdue records (after downtime) could fill memory faster than deliveries drain it.
// Consumption pauses at max_preloaded_records in memory and resumes below half of it.
// Consumption also pauses while records a store could not take wait (HoldRecord).
void Bridge::ApplyBackpressure() {
  const size_t in_memory = deliverer_->in_memory();
  const bool pause = in_memory >= config_.max_preloaded_records || !held_.empty();
  const bool resume = consumption_paused_ && in_memory < config_.max_preloaded_records / 2;
  if (!pause && !resume) return;
  // Pausing again is harmless and covers partitions assigned since the last pause.
  if (Status s = consumer_->SetPaused(pause); !s.ok()) {
    warnings_.Warn(s.ToString());
    return;
  }
  if (pause == consumption_paused_) return;
  consumption_paused_ = pause;
  logger_.Info(std::string(pause ? "pausing" : "resuming") + " consumption: " +
               (held_.empty() ? std::string()
                              : std::to_string(held_.size()) + " records waiting for a store, ") +
               std::to_string(in_memory) + " records in memory (wheel.max_preloaded_records=" +
               std::to_string(config_.max_preloaded_records) + ")");
}

void Bridge::DrainConsumer() {
  if (stopping_) return;
  ApplyBackpressure();
  const uint64_t reloads = cutter_ ? cutter_->rollbacks() : 0;
  std::vector<IncomingRecord> records = consumer_->Poll(kConsumeBatch);
  // A rollback in a rebalance callback served by Poll moved reading back: these were fetched
  // before it, and ingesting them would make the records read again look fetched twice.
  if (cutter_ && cutter_->rollbacks() != reloads) records.clear();
  consumed_ += records.size();
  std::vector<DueRecord> due;
  for (auto& record : records) {
    // After a failure nothing more is ingested: a record after a failed one must not move the
    // store's marker or the partition's progress past it.
    if (exit_code_ != 0) break;
    // Behind a held record, in order (consumption is paused, but a fetched batch may still come).
    if (!held_.empty()) {
      held_.push_back(std::move(record));
      continue;
    }
    if (Status s = Ingest(record, &due); !s.ok()) HoldRecord(std::move(record), s);
  }
  deliverer_->Schedule(std::move(due));
  if (consumer_->fatal()) return Fail(Status::Unavailable("the consumer hit a fatal error"));
  if (records.size() == kConsumeBatch) {
    // More may be queued: continue after other handlers (timers, deliveries) had a turn.
    boost::asio::post(io_, [this] { DrainConsumer(); });
  } else {
    ArmConsumerWakeup();
  }
}

void Bridge::HoldRecord(IncomingRecord record, const Status& why) {
  ++append_failures_;
  held_.push_back(std::move(record));
  if (held_.size() > 1) return;  // the retry is armed
  held_since_ms_ = clock_.now_ms();
  held_retry_ms_ = kHeldRetryMinMs;
  logger_.Warn(why.ToString() + ": pausing consumption until the store takes records again " +
               "(deliveries go on; retrying with back-off up to " +
               std::to_string(kHeldRetryMaxMs) + " ms)");
  ApplyBackpressure();
  ScheduleHeldRetry();
}

void Bridge::ScheduleHeldRetry() {
  held_retry_timer_.expires_after(milliseconds(held_retry_ms_));
  held_retry_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) RetryHeldRecords();
  });
}

void Bridge::RetryHeldRecords() {
  if (stopping_ || held_.empty()) return;
  std::vector<DueRecord> due;
  while (!held_.empty() && exit_code_ == 0) {
    if (Status s = Ingest(held_.front(), &due); !s.ok()) {
      ++append_failures_;
      held_retry_ms_ = std::min(2 * held_retry_ms_, kHeldRetryMaxMs);
      warnings_.Warn(s.ToString() + ": " + std::to_string(held_.size()) +
                     " records wait, consumption paused; retrying in " +
                     std::to_string(held_retry_ms_) + " ms");
      ScheduleHeldRetry();
      break;
    }
    held_.pop_front();
  }
  deliverer_->Schedule(std::move(due));
  if (!held_.empty()) return;
  logger_.Info("the stores take records again after " +
               std::to_string(clock_.now_ms() - held_since_ms_) + " ms: resuming consumption");
  ApplyBackpressure();
  DrainConsumer();
}

void Bridge::DropHeldRecords(const std::vector<TopicPartitionId>& partitions) {
  // Not committed: whoever reads these partitions next reads them again.
  std::erase_if(held_, [&partitions](const IncomingRecord& r) {
    return std::find(partitions.begin(), partitions.end(),
                     TopicPartitionId{r.topic, r.partition}) != partitions.end();
  });
  if (held_.empty()) held_retry_timer_.cancel();
}

Status Bridge::Ingest(const IncomingRecord& in, std::vector<DueRecord>* due) {
  auto it = stores_.find(TopicPartitionId{in.topic, in.partition});
  if (it == stores_.end()) {
    // A record fetched just before its partition was revoked; its offset is not committed,
    // so the partition's new owner reads it again.
    logger_.Warn("ignoring " + in.topic + "/" + std::to_string(in.partition) + "/" +
                 std::to_string(in.offset) + ": partition not assigned");
    return Status::Ok();
  }
  PartitionStore& store = *it->second;
  if (auto last = store.offsets().last_added(); last && in.offset <= *last) {
    // Fetched again in this run: librdkafka resumes a paused partition from the last stored
    // offset (auto store is off), not from the last record it returned.
    ++refetched_;
    return Status::Ok();
  }
  if (auto below = store.stored_below(); below && in.offset < *below) {
    // Stored before a crash whose offset commit was lost: storing it again would deliver twice.
    ++already_stored_;
    store.offsets().AddSettled(in.offset);
    store.progress().AddFinished(in.offset);
    return Status::Ok();
  }
  const int64_t now_ms = clock_.now_ms();
  IngestDecision decision = DecideIngest(in, config_.routes.at(in.topic), policy_, now_ms);
  if (auto* cancel = std::get_if<CancelRequested>(&decision)) {
    return Cancel(store, cancel->cancel, due);
  }
  auto* rejected = std::get_if<Rejected>(&decision);
  if (!rejected &&
      store.Finished(in.offset, std::get<Accepted>(decision).record.requested_deliver_at_ms)) {
    // Read again after a failover or restart: the committed progress says it was delivered
    // (or dead-lettered) already.
    ++already_finished_;
    store.offsets().AddSettled(in.offset);
    store.progress().AddFinished(in.offset);
    return Status::Ok();
  }
  if (rejected && store.FinishedRejected(in.offset)) {
    ++already_finished_;  // dead-lettered by the previous owner
    store.offsets().AddSettled(in.offset);
    store.progress().AddFinished(in.offset);
    return Status::Ok();
  }
  if (rejected) return DeadLetter(store, in, rejected->reason);
  auto& accepted = std::get<Accepted>(decision);
  if (store.Behind(accepted.record.requested_deliver_at_ms)) {
    DeliverBehind(store, in, std::move(accepted.record));
    return Status::Ok();
  }
  auto appended = store.Append(accepted.record, accepted.encoded, now_ms);
  if (!appended.ok() && appended.status().code() == Status::Code::kInvalidArgument) {
    // The store refuses this record (e.g. a due time past year 9999): bad input, not a fault.
    if (store.FinishedRejected(in.offset)) {
      ++already_finished_;  // dead-lettered by the previous owner
      store.offsets().AddSettled(in.offset);
      store.progress().AddFinished(in.offset);
      return Status::Ok();
    }
    return DeadLetter(store, in, "record: " + appended.status().message());
  }
  if (!appended.ok() && appended.status().code() == Status::Code::kFailedPrecondition) {
    // The store cannot be used any more (a failed fdatasync): only a reopen recovers it. Not
    // committed, so nothing is lost: the record is read again after the restart.
    Fail(appended.status().WithContext("append " + accepted.record.SourceId()));
    return Status::Ok();
  }
  if (!appended.ok()) {
    // A full disk, out of descriptors: nothing was appended, the record waits (HoldRecord).
    return appended.status().WithContext("append " + accepted.record.SourceId() + " to store " +
                                         store.id().ToString());
  }
  ++stored_;
  if (const std::optional<RecordPosition>& position = *appended) {
    due->push_back(DueRecord{store.id(), *position, std::move(accepted.record)});
  }
  return Status::Ok();
}

Status Bridge::DeadLetter(PartitionStore& store, const IncomingRecord& in,
                          const std::string& reason) {
  ++dead_lettered_;
  store.offsets().AddDeadLettered(in.offset);
  store.progress().AddDeadLetter(in.offset);
  DelayedRecord letter = MakeDeadLetter(in, reason, config_.dead_letter_topic);
  logger_.Warn("dead letter " + letter.SourceId() + " -> " + config_.dead_letter_topic + ": " +
               reason);
  deliverer_->ProduceNow(store.id(), std::move(letter), DeliveryForm::kDeadLetter);
  return Status::Ok();
}

Status Bridge::Cancel(PartitionStore& store, const StoredCancel& cancel,
                      std::vector<DueRecord>* due) {
  auto result = store.ApplyCancel(cancel);
  if (!result.ok() && result.status().code() == Status::Code::kFailedPrecondition) {
    // The store cannot be used any more (a failed fdatasync); the cancel is read again after the
    // restart.
    Fail(result.status().WithContext("cancel " + cancel.TargetId()));
    return Status::Ok();
  }
  // A full disk, out of descriptors, a read error: the cancel waits (HoldRecord).
  if (!result.ok()) return result.status().WithContext("store " + store.id().ToString());
  for (const std::string& damage : result->damage) {
    ++corrupt_records_;
    logger_.Error("store " + store.id().ToString() + ": finding " + cancel.TargetId() +
                  " met damage, searched its hour second by second: " + damage);
  }
  using Verdict = PartitionStore::CancelVerdict;
  bool counted = result->verdict == Verdict::kCancelled;
  if (result->loaded_at_ms) {
    // Appended with this consumer batch: not handed over yet.
    const auto in_batch = [&](const DueRecord& r) {
      return r.store == store.id() && r.record.source_offset == cancel.target_offset;
    };
    for (const DueRecord& r : *due) {
      if (in_batch(r)) store.Acknowledge(r.position);
    }
    if (std::erase_if(*due, in_batch) > 0) counted = true;
    // Commands run in order: the rest of the batch goes first, then the cancel.
    deliverer_->Schedule(std::move(*due));
    due->clear();
    deliverer_->Cancel(store.id(), cancel.target_offset, counted);
  }
  if (counted) {
    ++cancelled_;
  } else if (result->verdict == Verdict::kTooLate) {
    CancelTooLate(store.id(), cancel.target_offset);
  } else if (result->verdict == Verdict::kUnknown) {
    ++cancel_unknown_;
    warnings_.Warn("cancel " + cancel.SourceId() + ": no record " + cancel.TargetId() +
                   " is pending here (never accepted, itself a cancel, or delivered and its "
                   "hour's files removed)");
  }
  return Status::Ok();
}

void Bridge::CancelTooLate(const TopicPartitionId& store, int64_t target_offset) {
  ++cancel_too_late_;
  warnings_.Warn("cancel of " + store.topic + "/" + std::to_string(store.partition) + "/" +
                 std::to_string(target_offset) +
                 " came too late: it was delivered already, or is being produced");
}

void Bridge::DeliverBehind(PartitionStore& store, const IncomingRecord& in, DelayedRecord record) {
  ++delivered_behind_;
  // Settled (for the marker) and finished (for the progress) once the transaction commits.
  store.offsets().AddDeadLettered(in.offset);
  store.progress().AddDeadLetter(in.offset);
  deliverer_->ProduceNow(store.id(), std::move(record), DeliveryForm::kRecord);
}

void Bridge::ScheduleTransaction(milliseconds delay) {
  transaction_timer_.expires_after(delay);
  transaction_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) OnTransactionTimer();
  });
}

void Bridge::OnTransactionTimer() {
  if (stopping_ || transaction_failed()) return;
  using CutResult = TransactionCutter::CutResult;
  const CutResult result = cutter_->Cut(false, true);
  if (result == CutResult::kFailed) return;
  // After a rollback the group is most likely rebalancing: give it time to settle.
  ScheduleTransaction(
      milliseconds(result == CutResult::kNotExact     ? TransactionCutter::kNotExactRetryMs
                   : result == CutResult::kRolledBack ? kAfterRollbackMs
                                                      : config_.transaction_interval_ms));
}

Result<std::map<TopicPartitionId, int64_t>> Bridge::ReopenStores(
    const std::vector<TopicPartitionId>& dropped, const std::vector<TopicPartitionId>& reload) {
  DropHeldRecords(dropped);  // reading moves back to the last committed transaction
  std::map<TopicPartitionId, int64_t> starts = OpenStores(reload);
  if (exit_code_ != 0) return Status::Unavailable("the bridge is stopping");
  boost::asio::post(io_, [this] { Preload(); });
  return starts;
}

// ---- delivery side ----

void Bridge::Preload() {
  if (stopping_ || transaction_failed()) return;
  const int64_t now_ms = clock_.now_ms();
  NoticeClockStepBack(now_ms);
  if (exit_code_ != 0) return;
  for (auto& [id, store] : stores_) {
    ReleaseDeliveriesWhenReadToTheEnd(*store);
    if (!store->delivers()) continue;
    const size_t in_memory = deliverer_->in_memory();
    if (in_memory >= config_.max_preloaded_records) break;  // wait for deliveries
    std::vector<DueRecord> due;
    auto result = PreloadStore(
        *store, store->PreloadHorizonSecond(now_ms, config_.preload_seconds),
        config_.max_preloaded_records - in_memory,
        [&due, &id = id](RecordPosition position, DelayedRecord&& record) {
          due.push_back(DueRecord{id, position, std::move(record)});
        },
        [this, &id = id](const std::string& what) {
          ++corrupt_records_;
          logger_.Error("store " + id.ToString() + ": skipping an unreadable record: " + what);
        });
    deliverer_->Schedule(std::move(due));
    if (!result.ok()) return Fail(result.status());
    if (!result->retry.ok()) {
      ++preload_retries_;
      warnings_.Warn("preload " + id.ToString() + ": " + result->retry.ToString() +
                     " (read again in " + std::to_string(kPreloadIntervalMs) + " ms)");
    }
  }
}

void Bridge::NoticeClockStepBack(int64_t now_ms) {
  const int64_t step_ms = last_clock_ms_ - now_ms;
  last_clock_ms_ = now_ms;
  if (step_ms < kClockStepMs) return;
  ++clock_steps_back_;
  if (step_ms >= kClockStepStopMs) {
    return Fail(Status::Unavailable(
        "the wall clock stepped back by " + std::to_string(step_ms) +
        " ms: librdkafka waits for deadlines on the wall clock (librdkafka issue #2145) and "
        "could stall this long, so the bridge stops for its supervisor to restart it; after the "
        "restart " +
        CheckpointAheadConsequence()));
  }
  logger_.Warn("the wall clock stepped back by " + std::to_string(step_ms) +
               " ms: " + CheckpointAheadConsequence());
}

std::string Bridge::CheckpointAheadConsequence() const {
  if (config_.exactly_once()) {
    return "records asking for a time before a partition's committed checkpoint (which stays "
           "where the clock had reached) are delivered at once, up to the step early";
  }
  return "records are still delivered at the times they ask for; the delivered checkpoints stay "
         "where the clock had reached until it passes them again (records arriving meanwhile "
         "are stored after them, and the progress committed to Kafka waits too)";
}

void Bridge::ApplyAcks() { ApplyAckBatch(deliverer_->TakeAcks()); }

void Bridge::ApplyAckBatch(const AckBatch& acks) {
  for (const auto& [id, position] : acks.delivered) {
    // A store revoked meanwhile: its new owner delivers the record again.
    if (auto it = stores_.find(id); it != stores_.end()) it->second->Acknowledge(position);
  }
  for (const auto& answer : acks.cancels) {
    auto it = stores_.find(answer.store);
    if (it == stores_.end()) continue;  // revoked meanwhile: its next owner reads the cancel again
    // Finished without a delivery: the watermark may pass it.
    for (const RecordPosition& position : answer.cancelled_at) it->second->Acknowledge(position);
    if (answer.counted) continue;
    if (answer.cancelled_at.empty()) {
      CancelTooLate(answer.store, answer.target_offset);
    } else {
      ++cancelled_;
    }
  }
  for (const auto& ack : acks.dead_lettered) {
    if (auto it = stores_.find(ack.store); it != stores_.end()) {
      it->second->offsets().MarkDeadLetterAcked(ack.source_offset);
      it->second->progress().DeadLetterAcked(ack.source_offset);
    }
  }
}

void Bridge::PersistCheckpoints() {
  const int64_t now_ms = clock_.now_ms();
  for (auto& [id, store] : stores_) {
    const std::optional<storage::DeliveryCheckpoint> cp = store->TakeCheckpointDue(now_ms);
    if (!cp) continue;
    disk_.Submit(
        [dir = store->log().dir(), cp = *cp] { return storage::WriteDeliveryCheckpoint(dir, cp); },
        [this, id = id, cp = *cp](const Status& written) {
          // Revocation finishes the disk work before it closes a store.
          auto it = stores_.find(id);
          if (it == stores_.end()) return;
          if (Status s = it->second->CheckpointWritten(cp, written); !s.ok()) {
            // Not fatal: an old checkpoint only means more re-delivery after a crash.
            warnings_.Warn("checkpoint " + id.ToString() + ": " + s.ToString());
          }
        });
  }
}

void Bridge::AddDeliveryStats(const DeliveryStats& d) {
  delivered_ += d.delivered;
  delivery_retries_ += d.retries;
  delivery_refused_ += d.refused;
  dead_letters_reduced_ += d.reduced;
  dead_letters_dropped_ += d.dropped;
  lateness_ms_.Merge(d.lateness_at_ack);
  stats_lateness_at_produce_.Merge(d.lateness_at_produce);
  stats_lateness_at_ack_.Merge(d.lateness_at_ack);
}

void Bridge::LogStats() {
  const DeliveryStats d = deliverer_->TakeStats();
  AddDeliveryStats(d);
  logger_.Info(
      "stats: consumed=" + std::to_string(consumed_) + " stored=" + std::to_string(stored_) +
      " already_stored=" + std::to_string(already_stored_) + " already_finished=" +
      std::to_string(already_finished_) + " refetched=" + std::to_string(refetched_) +
      " dead_lettered=" + std::to_string(dead_lettered_) + " cancelled=" +
      std::to_string(cancelled_) + " cancel_too_late=" + std::to_string(cancel_too_late_) +
      " cancel_unknown=" + std::to_string(cancel_unknown_) +
      (config_.exactly_once()
           ? " delivered_behind=" + std::to_string(delivered_behind_) +
                 " transactions=" + std::to_string(cutter_->transactions()) +
                 " transaction_cuts_put_off=" + std::to_string(cutter_->cuts_put_off()) +
                 " transactions_aborted=" + std::to_string(cutter_->rollbacks()) +
                 " transaction_max_ms=" + std::to_string(cutter_->TakeLongestCutMs())
           : std::string()) +
      " delivered=" + std::to_string(delivered_) + " delivery_retries=" +
      std::to_string(delivery_retries_) + " delivery_refused=" + std::to_string(delivery_refused_) +
      " dead_letters_reduced=" + std::to_string(dead_letters_reduced_) + " dead_letters_dropped=" +
      std::to_string(dead_letters_dropped_) + " corrupt=" + std::to_string(corrupt_records_) +
      " preload_retries=" + std::to_string(preload_retries_) + " clock_steps_back=" +
      std::to_string(clock_steps_back_) + " append_failures=" + std::to_string(append_failures_) +
      " sync_failures=" + std::to_string(committer_->sync_failures()) +
      " held=" + std::to_string(held_.size()) + " in_memory=" + std::to_string(d.in_memory) +
      " in_wheel=" + std::to_string(d.in_wheel) + " in_flight=" + std::to_string(d.in_flight) +
      " stores=" + std::to_string(stores_.size()) +
      " | lateness at produce: " + LatenessSummaryMs(stats_lateness_at_produce_) +
      " | lateness at ack: " + LatenessSummaryMs(stats_lateness_at_ack_));
  stats_lateness_at_produce_.Reset();
  stats_lateness_at_ack_.Reset();
}

// ---- metrics and health ----

Status Bridge::StartHttp() {
  if (!config_.metrics_listen) return Status::Ok();
  std::map<std::string, HttpHandler> routes;
  routes["/metrics"] = [this](HttpReply reply) { ServeMetrics(std::move(reply)); };
  routes["/healthz"] = [this](HttpReply reply) { ServeHealth(std::move(reply)); };
  routes["/readyz"] = [this](HttpReply reply) { ServeReady(std::move(reply)); };
  auto server = HttpServer::Start(io_, *config_.metrics_listen, std::move(routes));
  if (!server.ok()) return server.status().WithContext("metrics.listen");
  http_ = std::move(server).value();
  const ListenAddress bound{config_.metrics_listen->host, http_->port()};
  logger_.Info("serving /metrics, /healthz and /readyz on http://" + bound.ToString());
  return Status::Ok();
}

void Bridge::AskDeliveryThread(std::function<void(const DeliveryStats&)> answered,
                               std::function<void()> timed_out) {
  auto settled = std::make_shared<bool>(false);
  auto deadline = std::make_shared<boost::asio::steady_timer>(io_, milliseconds(kDeliveryAnswerMs));
  deadline->async_wait([settled, timed_out](const boost::system::error_code& ec) {
    if (!ec && !std::exchange(*settled, true)) timed_out();
  });
  // Everything the answer needs moves into the handler posted back to the loop, so nothing of
  // it (an HTTP connection) is released on the delivery thread.
  deliverer_->TakeStatsLater([this, answered = std::move(answered), settled = std::move(settled),
                              deadline = std::move(deadline)](DeliveryStats d) mutable {
    boost::asio::post(io_, [this, d = std::move(d), answered = std::move(answered),
                            settled = std::move(settled), deadline = std::move(deadline)] {
      AddDeliveryStats(d);
      if (std::exchange(*settled, true)) return;
      deadline->cancel();
      answered(d);
    });
  });
}

void Bridge::ServeMetrics(HttpReply reply) {
  AskDeliveryThread(
      [this, reply](const DeliveryStats& d) {
        reply({200, "text/plain; version=0.0.4; charset=utf-8", RenderMetrics(GatherMetrics(d))});
      },
      [reply] {
        reply({503, "text/plain; charset=utf-8",
               "the delivery thread did not answer within " + std::to_string(kDeliveryAnswerMs) +
                   " ms\n"});
      });
}

BridgeMetrics Bridge::GatherMetrics(const DeliveryStats& d) {
  BridgeMetrics m;
  m.version = DELAYBRIDGE_VERSION;
  m.consumed = consumed_;
  m.stored = stored_;
  m.delivered = delivered_;
  m.delivery_retries = delivery_retries_;
  m.rejected = dead_lettered_;
  m.refused = delivery_refused_;
  m.cancelled = cancelled_;
  m.cancel_too_late = cancel_too_late_;
  m.cancel_unknown = cancel_unknown_;
  m.dead_letters_reduced = dead_letters_reduced_;
  m.dead_letters_dropped = dead_letters_dropped_;
  m.corrupt_records = corrupt_records_;
  m.append_failures = append_failures_;
  m.sync_failures = committer_->sync_failures();
  m.preload_retries = preload_retries_;
  m.clock_steps_back = clock_steps_back_;
  m.exactly_once = config_.exactly_once();
  m.transactions = cutter_ ? cutter_->transactions() : 0;
  m.transactions_aborted = cutter_ ? cutter_->rollbacks() : 0;
  m.in_memory = d.in_memory;
  m.in_wheel = d.in_wheel;
  m.in_flight = static_cast<uint64_t>(std::max(d.in_flight, 0));
  m.held = held_.size();
  for (auto& [id, store] : stores_) {
    PartitionMetrics p;
    p.id = id;
    p.consumer_lag_records = consumer_->Lag(id);
    p.delivered_until_ms = store->tracker().floor_ms();
    if (auto oldest = store->tracker().oldest_outstanding()) {
      p.oldest_pending_ms = oldest->deliver_at_ms;
    }
    // At most one head table read: the watermark's hour, through the store's bounded cache.
    Result<uint64_t> pending =
        store->log().CountFromSecond(storage::SecondOfMs(store->tracker().floor_ms()));
    if (pending.ok()) p.records_pending = *pending;
    p.store_bytes = DirectoryBytes(store->dir());
    m.partitions.push_back(std::move(p));
  }
  m.lateness_ms = &lateness_ms_;
  m.group_commit_us = &committer_->group_commit_us();
  return m;
}

void Bridge::ServeHealth(HttpReply reply) {
  AskDeliveryThread(
      [reply](const DeliveryStats&) {
        reply({200, "text/plain; charset=utf-8", "ok\n"});
      },
      [reply] {
        reply({503, "text/plain; charset=utf-8",
               "the delivery thread did not answer within " + std::to_string(kDeliveryAnswerMs) +
                   " ms\n"});
      });
}

void Bridge::ServeReady(HttpReply reply) {
  std::string problem;
  if (!consumer_->member()) {
    problem = "not a member of consumer group " + config_.group_id + " (yet)";
  } else if (stores_.empty()) {
    problem = "no delay-topic partition assigned";
  } else {
    problem = consumer_->BrokersProblem();
    if (consumer_->all_brokers_down()) ProbeBrokersInBackground();
  }
  if (!problem.empty()) return reply({503, "text/plain; charset=utf-8", problem + "\n"});
  reply({200, "text/plain; charset=utf-8",
         "ready: " + std::to_string(stores_.size()) + " partition(s) assigned\n"});
}

void Bridge::ProbeBrokersInBackground() {
  if (broker_probe_running_) return;
  JoinBrokerProbe();
  broker_probe_running_ = true;
  broker_probe_ = std::thread([this] {
    const Status answered = consumer_->ProbeBrokers(kBrokerProbeTimeoutMs);
    boost::asio::post(io_, [this, answered] {
      broker_probe_running_ = false;
      if (answered.ok()) consumer_->BrokersAnswered();
    });
  });
}

void Bridge::JoinBrokerProbe() {
  if (broker_probe_.joinable()) broker_probe_.join();
}

// ---- rebalance ----

std::map<TopicPartitionId, int64_t> Bridge::OnAssigned(
    const std::vector<TopicPartitionId>& partitions) {
  // exactly_once: reading the new partitions' progress can wait for a vanished instance's
  // transaction to settle (up to transaction_timeout_ms). No transaction of this instance may
  // stay open meanwhile, or the broker aborts it at that same timeout and fences the producer:
  // commit, and produce nothing until the stores are open.
  const bool held = config_.exactly_once() && !transaction_failed() && !partitions.empty() &&
                    cutter_->Cut(false, false) == TransactionCutter::CutResult::kCommitted;
  std::map<TopicPartitionId, int64_t> starts = OpenStores(partitions);
  if (held) deliverer_->Resume();
  // Start loading the new stores without waiting for the next preload tick.
  boost::asio::post(io_, [this] { Preload(); });
  return starts;
}

std::map<TopicPartitionId, int64_t> Bridge::OpenStores(
    const std::vector<TopicPartitionId>& partitions) {
  storage::StoreOptions options;
  options.max_open_hours = config_.max_open_hours;
  options.max_record_bytes = config_.max_record_bytes;
  // exactly_once: an instance that vanished can leave a transaction holding these partitions'
  // offsets open until the broker aborts it (transaction_timeout_ms); the commit is read only
  // once it is settled.
  const int committed_timeout_ms =
      config_.exactly_once()
          ? static_cast<int>(config_.transaction_timeout_ms) + kCommittedTimeoutMs
          : kCommittedTimeoutMs;
  auto committed = consumer_->Committed(partitions, committed_timeout_ms);
  if (!committed.ok() && config_.exactly_once()) {
    // Guessing the progress could deliver a record twice.
    Fail(committed.status().WithContext("assign (exactly_once needs the committed progress)"));
    return {};
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
    std::optional<ProgressMetadata> kafka_state;
    if (commit) {
      auto parsed = ParseProgressMetadata(commit->metadata);
      if (parsed.ok()) {
        kafka_state = *parsed;
      } else {
        logger_.Warn("assigned " + id.ToString() + ": " + parsed.status().ToString() +
                     " (treated as an offset without progress)");
      }
    }
    storage::RecoveryReport report;
    auto store = PartitionStore::Open(id, config_.storage_dir, options, clock_.now_ms(),
                                      kafka_state, &report, config_.exactly_once());
    if (!store.ok()) {
      Fail(store.status().WithContext("assign " + id.ToString()));
      return starts;
    }
    WarnIfCheckpointAhead(**store, clock_.now_ms());
    if (!(*store)->damaged_checkpoint().empty()) {
      logger_.Error("assigned " + id.ToString() + ": " + (*store)->damaged_checkpoint() +
                    ": ignored; delivering from " + ToString((*store)->start()) +
                    " (records delivered since may be delivered again)");
    }
    const std::optional<int64_t> committed_offset =
        commit ? std::optional<int64_t>(commit->offset) : std::nullopt;
    const std::optional<int64_t> start = (*store)->Resume(
        committed_offset, kafka_state, clock_.now_ms(), (config_.preload_seconds + 1) * 1000);
    if (start) starts[id] = *start;
    LogAssigned(**store, report, committed_offset, kafka_state, start);
    HoldDeliveriesUntilReadToTheEnd(**store, start, kafka_state);
    stores_[id] = std::move(store).value();
  }
  return starts;
}

void Bridge::HoldDeliveriesUntilReadToTheEnd(PartitionStore& store, std::optional<int64_t> start,
                                             const std::optional<ProgressMetadata>& kafka_state) {
  const std::string id = store.id().ToString();
  auto marks = consumer_->QueryWatermarks(store.id(), kWatermarkTimeoutMs);
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

void Bridge::ReleaseDeliveriesWhenReadToTheEnd(PartitionStore& store) {
  const std::optional<int64_t>& until = store.deliveries_held_until();
  if (!until) return;
  const PartitionProgress& progress = store.progress();
  const std::optional<int64_t> position = consumer_->Position(store.id());
  const bool read = (progress.has_position() && progress.ingest_position() >= *until) ||
                    (position && *position >= *until);
  // A full disk pauses reading; the records already stored must still be delivered (and their
  // hours deleted, which makes room).
  if (!read && held_.empty()) return;
  store.ReleaseDeliveries();
  logger_.Info(store.id().ToString() + ": " +
               (read ? "reading reached offset " + std::to_string(*until) + ": delivering"
                     : std::string("reading paused by a store that takes no records: delivering "
                                   "what is stored (a cancel not yet read may come too late)")));
}

void Bridge::WarnIfCheckpointAhead(const PartitionStore& store, int64_t now_ms) {
  // Up to the preload horizon ahead is normal (the watermark waits at preloaded records).
  const int64_t ahead_ms = store.start().deliver_at_ms - now_ms;
  if (ahead_ms <= (config_.preload_seconds + 1) * 1000 + kClockStepMs) return;
  logger_.Warn("assigned " + store.id().ToString() + ": its delivered checkpoint " +
               ToString(store.start()) + " is " + std::to_string(ahead_ms) +
               " ms ahead of the clock (the clock stepped back, or the previous owner's clock "
               "runs ahead): " +
               CheckpointAheadConsequence());
}

void Bridge::LogAssigned(const PartitionStore& store, const storage::RecoveryReport& report,
                         std::optional<int64_t> committed_offset,
                         const std::optional<ProgressMetadata>& kafka_state,
                         std::optional<int64_t> start) {
  const std::string id = store.id().ToString();
  const auto or_none = [](std::optional<int64_t> v) {
    return v ? std::to_string(*v) : std::string("none");
  };
  logger_.Info(
      "assigned " + id + ": store " + store.dir() + " id=" + store.store_id() +
      " hours=" + std::to_string(report.hours) + " records=" + std::to_string(report.records) +
      " truncated_bytes=" + std::to_string(report.truncated_bytes) + " records_dropped=" +
      std::to_string(report.records_dropped) + " resume_at=" + ToString(store.start()) +
      " committed_offset=" + or_none(committed_offset) + " reading_from=" + or_none(start) +
      (store.had_checkpoint() ? " (checkpoint)" : " (no checkpoint)"));
  if (committed_offset && !kafka_state && !store.had_checkpoint() && report.hours == 0) {
    // Committed by a bridge that kept no progress in Kafka (before version 0.2): records still
    // pending in that instance's store below the committed offset are not read again here.
    logger_.Error("assigned " + id + " has committed offset " + std::to_string(*committed_offset) +
                  " without progress metadata and an empty store here: records still pending in "
                  "the store of the instance that committed it are not delivered by this one");
  }
  if (kafka_state && store.rebuilt()) {
    logger_.Warn("assigned " + id + ": the group's last commit came from store " +
                 kafka_state->store_id + ", not this one: rebuilding it from the delay topic, " +
                 "reading offsets " + or_none(start) + ".." +
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

void Bridge::OnRevoked(const std::vector<TopicPartitionId>& partitions, bool lost) {
  std::vector<TopicPartitionId> owned;
  for (const auto& id : partitions) {
    if (stores_.count(id)) owned.push_back(id);
  }
  if (owned.empty()) return;
  DropHeldRecords(owned);
  revoker_->Revoke(owned, lost);
}

}  // namespace delaybridge::plugin
