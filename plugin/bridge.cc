#include "plugin/bridge.h"

#include <signal.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "plugin/dead_letter.h"
#include "plugin/preloader.h"

namespace delaybridge::plugin {

namespace {

using std::chrono::milliseconds;

constexpr size_t kConsumeBatch = 1000;          // records per drain before yielding the loop
constexpr int64_t kQueueFullRetryMs = 10;       // producer queue full: retry soon
constexpr int64_t kPreloadIntervalMs = 100;     // preloader walk period
constexpr int64_t kSafetyPollIntervalMs = 100;  // in case an eventfd wake-up was missed
constexpr int kFlushTimeoutMs = 10'000;         // revoke/shutdown wait for acknowledgements
constexpr int kCommittedTimeoutMs = 10'000;     // assign: reading the group's offsets
constexpr int64_t kSlowSyncMs = 100;            // a store sync this slow is worth a warning
constexpr int64_t kWarningIntervalMs = 1000;    // at most one repeated warning per second

// Retry delay after n failed attempts: 100 ms doubling, capped at 10 s.
int64_t BackoffMs(uint32_t failed_attempts) {
  const uint32_t shift = std::min<uint32_t>(failed_attempts, 7);
  return std::min<int64_t>(100LL << shift, 10'000);
}

std::string PositionString(RecordPosition p) {
  return std::to_string(p.deliver_at_ms) + "/" + std::to_string(p.ordinal);
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
      stats_timer_(io_),
      safety_poll_timer_(io_),
      delivery_timer_(io_),
      wheel_(config.tick_ms, clock.now_ms()) {
  policy_.delay.max_delay_ms = config_.max_delay_ms;
  policy_.delay.allowed_targets = &config_.allowed_targets;
  policy_.max_record_bytes = config_.max_record_bytes;
}

Bridge::~Bridge() = default;

int Bridge::Run() {
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
  auto producer = RecordProducer::Create(
      kafka, logger_, [this](uint64_t token, RdKafka::ErrorCode err) { OnAck(token, err); });
  if (!producer.ok()) return producer.status();
  producer_ = std::move(producer).value();
  auto consumer = SourceConsumer::Create(kafka, config_.group_id, logger_, *this);
  if (!consumer.ok()) return consumer.status();
  consumer_ = std::move(consumer).value();

  auto producer_wakeup = producer_->MakeWakeup(io_);
  if (!producer_wakeup.ok()) return producer_wakeup.status();
  producer_wakeup_ = std::move(producer_wakeup).value();
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
  ArmProducerWakeup();
  Every(commit_timer_, milliseconds(config_.sync_interval_ms), &Bridge::GroupCommit);
  Every(preload_timer_, milliseconds(kPreloadIntervalMs), &Bridge::Preload);
  Every(checkpoint_timer_, milliseconds(config_.checkpoint_interval_ms),
        &Bridge::PersistCheckpoints);
  Every(stats_timer_, milliseconds(config_.stats_interval_s * 1000), &Bridge::LogStats);
  Every(safety_poll_timer_, milliseconds(kSafetyPollIntervalMs), &Bridge::DrainConsumer);
  logger_.Info("bridge started: consuming " + std::to_string(topics.size()) +
               " delay topic(s) as group " + config_.group_id + " from " + bootstrap_servers_);
  return Status::Ok();
}

// Clean shutdown: stop consuming, then leaving the group revokes every partition, and
// revocation syncs, flushes, commits and checkpoints each store (OnRevoked).
void Bridge::Shutdown() {
  stopping_ = true;
  consumer_->Close();
  if (!stores_.empty()) {
    // The group could not be left cleanly (broker unreachable): close the stores anyway.
    std::vector<TopicPartitionId> ids;
    for (const auto& [id, store] : stores_) ids.push_back(id);
    OnRevoked(ids);
  }
  producer_->Flush(kFlushTimeoutMs);
  LogStats();
  logger_.Info(exit_code_ == 0 ? "bridge stopped cleanly" : "bridge stopped after an error");
}

void Bridge::Fail(const Status& status) {
  logger_.Error(status.ToString());
  exit_code_ = 1;
  io_.stop();
}

void Bridge::Every(boost::asio::steady_timer& timer, milliseconds period, void (Bridge::*step)()) {
  timer.expires_after(period);
  timer.async_wait([this, &timer, period, step](const boost::system::error_code& ec) {
    if (ec) return;
    (this->*step)();
    Every(timer, period, step);
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
void Bridge::ApplyBackpressure() {
  const size_t in_memory = pending_.size();
  const bool pause = in_memory >= config_.max_preloaded_records;
  const bool resume = consumption_paused_ && in_memory < config_.max_preloaded_records / 2;
  if (!pause && !resume) return;
  // Pausing again is harmless and covers partitions assigned since the last pause.
  if (Status s = consumer_->SetPaused(pause); !s.ok()) return WarnThrottled(s.ToString());
  if (pause == consumption_paused_) return;
  consumption_paused_ = pause;
  logger_.Info(std::string(pause ? "pausing" : "resuming") + " consumption: " +
               std::to_string(in_memory) + " records in memory (wheel.max_preloaded_records=" +
               std::to_string(config_.max_preloaded_records) + ")");
}

void Bridge::DrainConsumer() {
  if (stopping_) return;
  ApplyBackpressure();
  const std::vector<IncomingRecord> records = consumer_->Poll(kConsumeBatch);
  for (const auto& record : records) Ingest(record);
  if (consumer_->fatal()) return Fail(Status::Unavailable("the consumer hit a fatal error"));
  if (records.size() == kConsumeBatch) {
    // More may be queued: continue after other handlers (timers, deliveries) had a turn.
    boost::asio::post(io_, [this] { DrainConsumer(); });
  } else {
    ArmConsumerWakeup();
  }
}

void Bridge::Ingest(const IncomingRecord& in) {
  ++consumed_;
  auto it = stores_.find(TopicPartitionId{in.topic, in.partition});
  if (it == stores_.end()) {
    // A record fetched just before its partition was revoked; its offset is not committed,
    // so the partition's new owner reads it again.
    logger_.Warn("ignoring " + in.topic + "/" + std::to_string(in.partition) + "/" +
                 std::to_string(in.offset) + ": partition not assigned");
    return;
  }
  PartitionStore& store = *it->second;
  if (auto last = store.offsets().last_added(); last && in.offset <= *last) {
    // Fetched again in this run: librdkafka resumes a paused partition from the last stored
    // offset (auto store is off), not from the last record it returned.
    ++refetched_;
    return;
  }
  if (auto below = store.stored_below(); below && in.offset < *below) {
    // Stored before a crash whose offset commit was lost: storing it again would deliver twice.
    ++already_stored_;
    store.offsets().AddSettled(in.offset);
    return;
  }
  const int64_t now_ms = clock_.now_ms();
  IngestDecision decision = DecideIngest(in, config_.routes.at(in.topic), policy_, now_ms);
  if (auto* rejected = std::get_if<Rejected>(&decision)) {
    return DeadLetter(store, in, rejected->reason);
  }
  auto& accepted = std::get<Accepted>(decision);
  auto appended = store.Append(accepted.record, accepted.encoded, now_ms);
  if (!appended.ok() && appended.status().code() == Status::Code::kInvalidArgument) {
    // The store refuses this record (e.g. a due time past year 9999): bad input, not a fault.
    return DeadLetter(store, in, "record: " + appended.status().message());
  }
  if (!appended.ok()) {
    // Not committed, so nothing is lost: the record is read again after a restart.
    return Fail(appended.status().WithContext("append " + accepted.record.SourceId()));
  }
  ++stored_;
}

void Bridge::DeadLetter(PartitionStore& store, const IncomingRecord& in,
                        const std::string& reason) {
  ++dead_lettered_;
  store.offsets().AddDeadLettered(in.offset);
  const uint64_t token = kDeadLetterBit | next_dead_letter_id_++;
  DeadLetterPending pending{store.id(), in.offset,
                            MakeDeadLetter(in, reason, config_.dead_letter_topic), 0};
  logger_.Warn("dead letter " + pending.record.SourceId() + " -> " + config_.dead_letter_topic +
               ": " + reason);
  dead_letters_.emplace(token, std::move(pending));
  ProduceDeadLetter(token, clock_.now_ms());
}

void Bridge::GroupCommit() {
  std::map<TopicPartitionId, int64_t> commits;
  for (auto& [id, store] : stores_) {
    const auto sync_start = std::chrono::steady_clock::now();
    auto eligible = store->Sync();
    if (!eligible.ok()) return Fail(eligible.status());
    const auto sync_ms =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - sync_start)
            .count();
    if (sync_ms >= kSlowSyncMs) {
      WarnThrottled("slow disk: syncing store " + id.ToString() + " took " +
                    std::to_string(sync_ms) + " ms (deliveries wait meanwhile)");
    }
    DeliverIfDue();
    for (auto& waiting : *eligible) {
      const uint64_t token =
          pending_.Add(PendingDelivery{id, waiting.position, std::move(waiting.record), 0, {}});
      Schedule(token, waiting.position.deliver_at_ms);
    }
    if (auto offset = store->offsets().TakeCommittable()) {
      if (Status s = store->MarkCommittable(*offset); !s.ok()) WarnThrottled(s.ToString());
      commits[id] = *offset;
    }
  }
  consumer_->CommitAsync(commits);
}

// ---- delivery side ----

void Bridge::Preload() {
  if (stopping_) return;
  GroupCommit();  // the preloader must only see durable records
  const int64_t now_ms = clock_.now_ms();
  const int64_t horizon_second = now_ms / 1000 + config_.preload_seconds + 1;
  for (auto& [id, store] : stores_) {
    if (pending_.size() >= config_.max_preloaded_records) break;  // wait for deliveries
    const size_t budget = config_.max_preloaded_records - pending_.size();
    auto result = PreloadStore(
        *store, horizon_second, budget,
        [this, &id](RecordPosition position, DelayedRecord&& record) {
          const uint64_t token =
              pending_.Add(PendingDelivery{id, position, std::move(record), 0, {}});
          Schedule(token, position.deliver_at_ms);
        },
        [this, &id](const std::string& what) {
          ++corrupt_records_;
          logger_.Error("store " + id.ToString() + ": skipping an unreadable record: " + what);
        });
    if (!result.ok()) return Fail(result.status());
  }
}

void Bridge::Schedule(uint64_t token, int64_t deadline_ms) {
  const TimerHandle handle = wheel_.schedule(deadline_ms, token);
  if (!(token & kDeadLetterBit)) {
    if (PendingDelivery* d = pending_.Find(token)) d->timer = handle;
  }
  RearmDeliveryTimer();
}

void Bridge::RearmDeliveryTimer() {
  const std::optional<int64_t> next_ms = wheel_.next_deadline_ms();
  if (!next_ms || stopping_) return;
  if (delivery_timer_at_ms_ && *delivery_timer_at_ms_ <= *next_ms) return;  // already earlier
  delivery_timer_at_ms_ = *next_ms;
  const int64_t wait_ms = std::max<int64_t>(0, *next_ms - clock_.now_ms());
  delivery_timer_.expires_after(milliseconds(wait_ms));
  delivery_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed for an earlier deadline, or shutting down
    delivery_timer_at_ms_.reset();
    DeliverDue();
    RearmDeliveryTimer();
  });
}

// Store syncs and checkpoint writes are fsyncs on this thread; between two stores, deliver what
// fell due meanwhile, so lateness is bounded by one store's fsyncs, not by all of them.
void Bridge::DeliverIfDue() {
  if (auto next_ms = wheel_.next_deadline_ms(); next_ms && *next_ms <= clock_.now_ms()) {
    DeliverDue();
  }
}

void Bridge::DeliverDue() {
  const int64_t now_ms = clock_.now_ms();
  std::vector<uint64_t> due;
  wheel_.advance(now_ms, [&due](uint64_t token, int64_t) { due.push_back(token); });
  for (uint64_t token : due) {
    if (token & kDeadLetterBit) {
      ProduceDeadLetter(token, now_ms);
    } else {
      ProduceDelivery(token, now_ms);
    }
  }
  DrainProducer();
}

void Bridge::ProduceDelivery(uint64_t token, int64_t now_ms) {
  PendingDelivery* d = pending_.Find(token);
  if (!d) return;  // its partition was revoked
  d->timer = TimerHandle{};
  if (now_ms < d->position.deliver_at_ms) {
    // Never early, even if the wheel and the clock disagree by a tick.
    return Schedule(token, d->position.deliver_at_ms);
  }
  const RdKafka::ErrorCode err = producer_->Produce(d->record, now_ms, token);
  if (err == RdKafka::ERR__QUEUE_FULL) return Schedule(token, now_ms + kQueueFullRetryMs);
  if (err != RdKafka::ERR_NO_ERROR) {
    ++delivery_retries_;
    const int64_t backoff_ms = BackoffMs(d->failed_attempts++);
    WarnThrottled("produce " + d->record.SourceId() + " to " + d->record.target_topic + ": " +
                  RdKafka::err2str(err) + "; retrying in " + std::to_string(backoff_ms) + " ms");
    return Schedule(token, now_ms + backoff_ms);
  }
  lateness_at_produce_.Record(now_ms - d->position.deliver_at_ms);
}

void Bridge::ProduceDeadLetter(uint64_t token, int64_t now_ms) {
  auto it = dead_letters_.find(token);
  if (it == dead_letters_.end()) return;  // its partition was revoked
  DeadLetterPending& d = it->second;
  const RdKafka::ErrorCode err = producer_->Produce(d.record, now_ms, token);
  if (err == RdKafka::ERR__QUEUE_FULL) return Schedule(token, now_ms + kQueueFullRetryMs);
  if (err != RdKafka::ERR_NO_ERROR) {
    const int64_t backoff_ms = BackoffMs(d.failed_attempts++);
    WarnThrottled("produce dead letter " + d.record.SourceId() + ": " + RdKafka::err2str(err) +
                  "; retrying in " + std::to_string(backoff_ms) + " ms");
    Schedule(token, now_ms + backoff_ms);
  }
}

void Bridge::ArmProducerWakeup() {
  if (producer_wakeup_armed_) return;
  producer_wakeup_armed_ = true;
  producer_wakeup_->Arm([this] {
    producer_wakeup_armed_ = false;
    DrainProducer();
  });
}

void Bridge::DrainProducer() {
  while (producer_->Poll() > 0) {
  }
  if (producer_->fatal()) return Fail(Status::Unavailable("the producer hit a fatal error"));
  if (!stopping_) ArmProducerWakeup();
}

void Bridge::OnAck(uint64_t token, RdKafka::ErrorCode err) {
  if (token & kDeadLetterBit) {
    OnDeadLetterAck(token, err);
  } else {
    OnDeliveryAck(token, err);
  }
}

void Bridge::OnDeliveryAck(uint64_t token, RdKafka::ErrorCode err) {
  PendingDelivery* d = pending_.Find(token);
  if (!d) return;  // its partition was revoked; the new owner delivers it again
  const int64_t now_ms = clock_.now_ms();
  if (err != RdKafka::ERR_NO_ERROR) {
    ++delivery_retries_;
    const int64_t backoff_ms = BackoffMs(d->failed_attempts++);
    WarnThrottled("delivery of " + d->record.SourceId() + " to " + d->record.target_topic +
                  " failed: " + RdKafka::err2str(err) + "; retrying in " +
                  std::to_string(backoff_ms) + " ms");
    return Schedule(token, now_ms + backoff_ms);
  }
  if (auto it = stores_.find(d->store); it != stores_.end()) {
    it->second->tracker().Acknowledge(d->position);
  }
  lateness_at_ack_.Record(now_ms - d->position.deliver_at_ms);
  ++delivered_;
  pending_.Remove(token);
}

void Bridge::OnDeadLetterAck(uint64_t token, RdKafka::ErrorCode err) {
  auto it = dead_letters_.find(token);
  if (it == dead_letters_.end()) return;
  DeadLetterPending& d = it->second;
  if (err != RdKafka::ERR_NO_ERROR) {
    const int64_t backoff_ms = BackoffMs(d.failed_attempts++);
    WarnThrottled("dead letter " + d.record.SourceId() + " to " + d.record.target_topic +
                  " failed: " + RdKafka::err2str(err) + "; retrying in " +
                  std::to_string(backoff_ms) + " ms");
    return Schedule(token, clock_.now_ms() + backoff_ms);
  }
  if (auto store = stores_.find(d.source); store != stores_.end()) {
    store->second->offsets().MarkDeadLetterAcked(d.offset);
  }
  dead_letters_.erase(it);
}

void Bridge::PersistCheckpoints() {
  const int64_t now_ms = clock_.now_ms();
  for (auto& [id, store] : stores_) {
    if (Status s = store->PersistCheckpoint(now_ms); !s.ok()) {
      // Not fatal: an old checkpoint only means more re-delivery after a crash.
      WarnThrottled("checkpoint " + id.ToString() + ": " + s.ToString());
    }
    DeliverIfDue();
  }
}

void Bridge::LogStats() {
  logger_.Info("stats: consumed=" + std::to_string(consumed_) + " stored=" +
               std::to_string(stored_) + " already_stored=" + std::to_string(already_stored_) +
               " refetched=" + std::to_string(refetched_) + " dead_lettered=" +
               std::to_string(dead_lettered_) + " delivered=" + std::to_string(delivered_) +
               " delivery_retries=" + std::to_string(delivery_retries_) + " corrupt=" +
               std::to_string(corrupt_records_) + " in_memory=" + std::to_string(pending_.size()) +
               " in_wheel=" + std::to_string(wheel_.size()) +
               " in_flight=" + std::to_string(producer_->in_flight()) +
               " stores=" + std::to_string(stores_.size()) +
               " | lateness at produce: " + LatenessSummaryMs(lateness_at_produce_) +
               " | lateness at ack: " + LatenessSummaryMs(lateness_at_ack_));
  lateness_at_produce_.Reset();
  lateness_at_ack_.Reset();
}

void Bridge::WarnThrottled(const std::string& message) {
  const int64_t now_ms = clock_.now_ms();
  if (now_ms - last_warning_ms_ < kWarningIntervalMs) {
    ++suppressed_warnings_;
    return;
  }
  std::string line = message;
  if (suppressed_warnings_ > 0) {
    line += " (" + std::to_string(suppressed_warnings_) + " similar warnings suppressed)";
  }
  logger_.Warn(line);
  last_warning_ms_ = now_ms;
  suppressed_warnings_ = 0;
}

// ---- rebalance ----

void Bridge::OnAssigned(const std::vector<TopicPartitionId>& partitions) {
  storage::StoreOptions options;
  options.max_open_hours = config_.max_open_hours;
  options.max_record_bytes = config_.max_record_bytes;
  auto committed = consumer_->Committed(partitions, kCommittedTimeoutMs);
  if (!committed.ok()) {
    logger_.Warn(committed.status().ToString() +
                 " (records stored just before a crash may be stored and delivered twice)");
  }
  for (const auto& id : partitions) {
    storage::RecoveryReport report;
    auto store = PartitionStore::Open(id, config_.storage_dir, options, clock_.now_ms(), &report);
    if (!store.ok()) return Fail(store.status().WithContext("assign " + id.ToString()));
    std::optional<int64_t> resume_offset;
    if (committed.ok()) {
      if (auto it = committed->find(id); it != committed->end()) resume_offset = it->second;
    }
    (*store)->ResumeFrom(resume_offset);
    logger_.Info("assigned " + id.ToString() + ": store " + (*store)->log().dir() + " hours=" +
                 std::to_string(report.hours) + " records=" + std::to_string(report.records) +
                 " truncated_bytes=" + std::to_string(report.truncated_bytes) +
                 " records_dropped=" + std::to_string(report.records_dropped) +
                 " resume_at=" + PositionString((*store)->start()) +
                 " committed_offset=" + (resume_offset ? std::to_string(*resume_offset) : "none") +
                 " stored_below_offset=" +
                 ((*store)->stored_below() ? std::to_string(*(*store)->stored_below()) : "none") +
                 ((*store)->had_checkpoint() ? " (checkpoint)" : " (no checkpoint)"));
    if (resume_offset && !(*store)->had_checkpoint() && report.hours == 0) {
      // The group consumed this partition before, but not into this store: records it holds
      // pending live in another instance's storage.dir (see docs/bridge.md).
      logger_.Error("assigned " + id.ToString() + " has committed offset " +
                    std::to_string(*resume_offset) +
                    " but an empty store here: records still pending in the store of the "
                    "instance that owned it before are not delivered by this one");
    }
    for (const auto& problem : report.problems) {
      logger_.Warn("recovery of " + id.ToString() + ": " + problem.file + " at byte " +
                   std::to_string(problem.offset) + ": " + problem.what);
    }
    stores_[id] = std::move(store).value();
  }
  // Start loading the new stores without waiting for the next preload tick.
  boost::asio::post(io_, [this] { Preload(); });
}

void Bridge::OnRevoked(const std::vector<TopicPartitionId>& partitions) {
  std::vector<TopicPartitionId> owned;
  for (const auto& id : partitions) {
    if (stores_.count(id)) owned.push_back(id);
  }
  if (owned.empty()) return;
  // 1. Make every appended record durable (eligible records are not scheduled: the store
  //    is closing and a new owner loads them from disk).
  for (const auto& id : owned) {
    if (auto synced = stores_[id]->Sync(); !synced.ok()) logger_.Error(synced.status().ToString());
  }
  // 2. Wait for the acknowledgements of what is in flight (deliveries and dead letters).
  if (producer_->Flush(kFlushTimeoutMs) != RdKafka::ERR_NO_ERROR) {
    logger_.Warn("revoke: some produced records were not acknowledged within " +
                 std::to_string(kFlushTimeoutMs) + " ms; they will be delivered again");
  }
  // 3. Commit source offsets covering the durable and dead-lettered records.
  std::map<TopicPartitionId, int64_t> commits;
  for (const auto& id : owned) {
    if (auto offset = stores_[id]->offsets().Committable()) {
      if (Status s = stores_[id]->MarkCommittable(*offset); !s.ok()) logger_.Warn(s.ToString());
      commits[id] = *offset;
    }
  }
  if (Status s = consumer_->CommitSync(commits); !s.ok()) {
    logger_.Warn("revoke: " + s.ToString() + " (the records will be read and stored again)");
  }
  // 4. Checkpoint, then drop the partitions' in-memory state.
  CloseStores(owned);
}

void Bridge::CloseStores(const std::vector<TopicPartitionId>& ids) {
  const int64_t now_ms = clock_.now_ms();
  for (const auto& id : ids) {
    PartitionStore& store = *stores_[id];
    if (Status s = store.PersistCheckpoint(now_ms); !s.ok()) logger_.Error(s.ToString());
    std::vector<uint64_t> dropped;
    pending_.ForEach([&](uint64_t token, PendingDelivery& d) {
      if (d.store == id) dropped.push_back(token);
    });
    for (uint64_t token : dropped) {
      if (PendingDelivery* d = pending_.Find(token); d && d->timer.valid()) {
        wheel_.cancel(d->timer);
      }
      pending_.Remove(token);
    }
    std::erase_if(dead_letters_, [&id](const auto& entry) { return entry.second.source == id; });
    const auto committed = store.offsets().Committable();
    logger_.Info(
        "revoked " + id.ToString() + ": checkpoint=" + PositionString(store.last_persisted()) +
        " committed_offset=" + (committed ? std::to_string(*committed) : std::string("none")) +
        " released_from_memory=" + std::to_string(dropped.size()));
    stores_.erase(id);
  }
}

}  // namespace delaybridge::plugin
