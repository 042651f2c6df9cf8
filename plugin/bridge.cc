#include "plugin/bridge.h"

#include <signal.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <thread>

#include "plugin/preloader.h"
#include "storage/format.h"

namespace delaybridge::plugin {

namespace {

using std::chrono::milliseconds;

constexpr size_t kConsumeBatch = 1000;              // records per drain before yielding the loop
constexpr int64_t kPreloadIntervalMs = 100;         // preloader walk period
constexpr size_t kPreloadHandOverRecords = 10'000;  // preloaded records per Schedule
constexpr int64_t kSafetyPollIntervalMs = 100;      // in case an eventfd wake-up was missed
constexpr int kFlushTimeoutMs = 10'000;             // revoke/shutdown wait for acknowledgements
constexpr int64_t kAfterRollbackMs = 1000;          // the next cut after an aborted transaction
constexpr int64_t kDeliveryAnswerMs = 2'000;  // /healthz, /metrics: the delivery thread's answer
constexpr int kBrokerProbeTimeoutMs = 2'000;  // /readyz: a metadata request after brokers went down

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
      warnings_(logger, clock),
      disk_(io_),
      clock_steps_(logger, config_.exactly_once()) {}

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
  PartitionAssigner::Settings assign;
  assign.storage_dir = config_.storage_dir;
  assign.store.max_open_hours = config_.max_open_hours;
  assign.store.max_record_bytes = config_.max_record_bytes;
  assign.exactly_once = config_.exactly_once();
  assign.transaction_timeout_ms = config_.transaction_timeout_ms;
  assign.preload_seconds = config_.preload_seconds;
  assigner_ =
      std::make_unique<PartitionAssigner>(std::move(assign), stores_, *consumer_, logger_, clock_);
  IngestPipeline::Settings ingest;
  ingest.routes = config_.routes;
  ingest.policy.delay.max_delay_ms = config_.max_delay_ms;
  ingest.policy.delay.allowed_targets = &config_.allowed_targets;
  ingest.policy.max_record_bytes = config_.max_record_bytes;
  ingest.dead_letter_topic = config_.dead_letter_topic;
  IngestPipeline::Hooks ingest_hooks;
  ingest_hooks.held_changed = [this] {
    ApplyBackpressure();
    if (ingest_->held() == 0) DrainConsumer();
  };
  ingest_hooks.fail = [this](const Status& s) { Fail(s); };
  ingest_ = std::make_unique<IngestPipeline>(io_, std::move(ingest), stores_, *deliverer_,
                                             std::move(ingest_hooks), logger_, warnings_, clock_);
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
// Consumption also pauses while records a store could not take wait (IngestPipeline).
void Bridge::ApplyBackpressure() {
  const size_t in_memory = deliverer_->in_memory();
  const size_t held = ingest_->held();
  const bool pause = in_memory >= config_.max_preloaded_records || held > 0;
  const bool resume = consumption_paused_ && in_memory < config_.max_preloaded_records / 2;
  if (!pause && !resume) return;
  // Pausing again is harmless and covers partitions assigned since the last pause.
  if (Status s = consumer_->SetPaused(pause); !s.ok()) {
    warnings_.Warn(s.ToString());
    return;
  }
  if (pause == consumption_paused_) return;
  consumption_paused_ = pause;
  logger_.Info(
      std::string(pause ? "pausing" : "resuming") + " consumption: " +
      (held == 0 ? std::string() : std::to_string(held) + " records waiting for a store, ") +
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
  // After a failure (e.g. a store that would not open in a rebalance Poll served) nothing more is
  // ingested: a record after a failed one must not move the store's marker or the partition's
  // progress past it.
  if (exit_code_ != 0) return;
  consumed_ += records.size();
  const size_t batch = records.size();
  ingest_->Take(std::move(records));
  if (consumer_->fatal()) return Fail(Status::Unavailable("the consumer hit a fatal error"));
  if (batch == kConsumeBatch) {
    // More may be queued: continue after other handlers (timers, deliveries) had a turn.
    boost::asio::post(io_, [this] { DrainConsumer(); });
  } else {
    ArmConsumerWakeup();
  }
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
  ingest_->DropHeld(dropped);  // reading moves back to the last committed transaction
  auto starts = assigner_->Open(reload);
  if (!starts.ok()) Fail(starts.status());
  // After any failure, this one or one before the rollback, the cutter must give up rather than
  // go on committing.
  if (exit_code_ != 0) return Status::Unavailable("the bridge is stopping");
  boost::asio::post(io_, [this] { Preload(); });
  return starts;
}

// ---- delivery side ----

void Bridge::Preload() {
  if (stopping_ || transaction_failed()) return;
  const int64_t now_ms = clock_.now_ms();
  if (Status s = clock_steps_.Notice(now_ms); !s.ok()) return Fail(s);
  for (auto& [id, store] : stores_) {
    assigner_->ReleaseDeliveriesWhenReadToTheEnd(*store, ingest_->held() > 0);
    if (!store->delivers()) continue;
    std::vector<DueRecord> due;
    auto result = PreloadStore(
        *store,
        BridgePreloadReach(*store, now_ms, config_.preload_seconds, deliverer_->in_memory(),
                           config_.max_preloaded_records),
        [this, &due, &id = id](RecordPosition position, EncodedRecord&& record) {
          due.push_back(DueRecord{id, position, std::move(record)});
          // In slices: a walk of a million records would otherwise hold them twice at once, in
          // this vector and in the delivery thread's slab.
          if (due.size() == kPreloadHandOverRecords) {
            deliverer_->Schedule(std::move(due));
            due.clear();
          }
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

void Bridge::ApplyAcks() { ApplyAckBatch(deliverer_->TakeAcks()); }

void Bridge::ApplyAckBatch(const AckBatch& acks) {
  for (const auto& [id, position] : acks.delivered) {
    // A store revoked meanwhile: its new owner delivers the record again.
    if (auto it = stores_.find(id); it != stores_.end()) it->second->Acknowledge(position);
  }
  ingest_->ApplyCancelAnswers(acks.cancels);
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
  delivery_queue_full_ += d.queue_full;
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
  const IngestCounts& in = ingest_->counts();
  logger_.Info(
      "stats: consumed=" + std::to_string(consumed_) + " stored=" + std::to_string(in.stored) +
      " already_stored=" + std::to_string(in.already_stored) + " already_finished=" +
      std::to_string(in.already_finished) + " refetched=" + std::to_string(in.refetched) +
      " dead_lettered=" + std::to_string(in.dead_lettered) + " cancelled=" +
      std::to_string(in.cancelled) + " cancel_too_late=" + std::to_string(in.cancel_too_late) +
      " cancel_unknown=" + std::to_string(in.cancel_unknown) +
      (config_.exactly_once()
           ? " delivered_behind=" + std::to_string(in.delivered_behind) +
                 " transactions=" + std::to_string(cutter_->transactions()) +
                 " transaction_cuts_put_off=" + std::to_string(cutter_->cuts_put_off()) +
                 " transactions_aborted=" + std::to_string(cutter_->rollbacks()) +
                 " transaction_max_ms=" + std::to_string(cutter_->TakeLongestCutMs())
           : std::string()) +
      " delivered=" + std::to_string(delivered_) +
      " delivery_retries=" + std::to_string(delivery_retries_) +
      " delivery_queue_full=" + std::to_string(delivery_queue_full_) +
      " delivery_refused=" + std::to_string(delivery_refused_) +
      " dead_letters_reduced=" + std::to_string(dead_letters_reduced_) +
      " dead_letters_dropped=" + std::to_string(dead_letters_dropped_) +
      " corrupt=" + std::to_string(corrupt_records_ + in.corrupt_records) +
      " preload_retries=" + std::to_string(preload_retries_) +
      " clock_steps_back=" + std::to_string(clock_steps_.steps_back()) +
      " append_failures=" + std::to_string(in.append_failures) + " sync_failures=" +
      std::to_string(committer_->sync_failures()) + " held=" + std::to_string(ingest_->held()) +
      " in_memory=" + std::to_string(d.in_memory) + " in_wheel=" + std::to_string(d.in_wheel) +
      " in_flight=" + std::to_string(d.in_flight) + " stores=" + std::to_string(stores_.size()) +
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
  m.stored = ingest_->counts().stored;
  m.delivered = delivered_;
  m.delivery_retries = delivery_retries_;
  m.delivery_queue_full = delivery_queue_full_;
  m.rejected = ingest_->counts().dead_lettered;
  m.refused = delivery_refused_;
  m.cancelled = ingest_->counts().cancelled;
  m.cancel_too_late = ingest_->counts().cancel_too_late;
  m.cancel_unknown = ingest_->counts().cancel_unknown;
  m.dead_letters_reduced = dead_letters_reduced_;
  m.dead_letters_dropped = dead_letters_dropped_;
  m.corrupt_records = corrupt_records_ + ingest_->counts().corrupt_records;
  m.append_failures = ingest_->counts().append_failures;
  m.sync_failures = committer_->sync_failures();
  m.preload_retries = preload_retries_;
  m.clock_steps_back = clock_steps_.steps_back();
  m.exactly_once = config_.exactly_once();
  m.transactions = cutter_ ? cutter_->transactions() : 0;
  m.transactions_aborted = cutter_ ? cutter_->rollbacks() : 0;
  m.in_memory = d.in_memory;
  m.in_wheel = d.in_wheel;
  m.in_flight = static_cast<uint64_t>(std::max(d.in_flight, 0));
  m.held = ingest_->held();
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
  auto starts = assigner_->Open(partitions);
  if (held) deliverer_->Resume();
  if (!starts.ok()) {
    Fail(starts.status());
    return {};
  }
  // Start loading the new stores without waiting for the next preload tick.
  boost::asio::post(io_, [this] { Preload(); });
  return std::move(starts).value();
}

void Bridge::OnRevoked(const std::vector<TopicPartitionId>& partitions, bool lost) {
  std::vector<TopicPartitionId> owned;
  for (const auto& id : partitions) {
    if (stores_.count(id)) owned.push_back(id);
  }
  if (owned.empty()) return;
  if (lost) {
    std::string names;
    for (const auto& id : owned) names += (names.empty() ? "" : ", ") + id.ToString();
    logger_.Warn(std::to_string(owned.size()) + " partition(s) lost: " + names +
                 " (librdkafka dropped the assignment: a session or poll timeout, or an offset "
                 "commit refused during a rebalance); their next owner, maybe this instance, "
                 "starts from the last commit that succeeded");
  }
  ingest_->DropHeld(owned);
  revoker_->Revoke(owned, lost);
}

}  // namespace delaybridge::plugin
