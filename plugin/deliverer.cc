#include "plugin/deliverer.h"

#include <pthread.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <future>
#include <optional>
#include <utility>

#include "plugin/dead_letter.h"

namespace delaybridge::plugin {

namespace {

using std::chrono::milliseconds;

constexpr int64_t kQueueFullRetryMs = 10;  // producer queue full: retry soon
constexpr int kAloneFlushMs = 10'000;      // a record produced alone: waiting for its batch
constexpr int64_t kAckNotifyIntervalMs = 10;
// Records scheduled between two looks at the clock while a batch is scheduled (about 0.3 ms).
constexpr size_t kScheduleCheckEveryRecords = 256;
// Delivery reports wait for the due timer's wake-up, rather than wake the thread themselves,
// when that wake-up comes within this long.
constexpr std::chrono::milliseconds kQuietReportsMs{10};

// Retry delay after n failed attempts: 100 ms doubling, capped at 10 s.
int64_t BackoffMs(uint32_t failed_attempts) {
  const uint32_t shift = std::min<uint32_t>(failed_attempts, 7);
  return std::min<int64_t>(100LL << shift, 10'000);
}

}  // namespace

Deliverer::Deliverer(Logger& logger, const Clock& clock, const Options& options,
                     Callbacks callbacks)
    : logger_(logger),
      clock_(clock),
      callbacks_(std::move(callbacks)),
      work_(io_.get_executor()),
      commands_(io_.get_executor()),
      warnings_(logger, clock),
      dead_letter_topic_(options.dead_letter_topic),
      due_timer_(
          io_, clock, options.tick_ms,
          [this](const std::vector<uint64_t>& tokens, int64_t now_ms) {
            ProduceDue(tokens, now_ms);
          },
          [this] { TakeWaitingWork(); }),
      transactional_(!options.transactions.transactional_id.empty()),
      transaction_max_records_(options.transaction_max_records) {}

Result<std::unique_ptr<Deliverer>> Deliverer::Start(const Options& options, Logger& logger,
                                                    const Clock& clock, Callbacks callbacks) {
  const bool transactional = !options.transactions.transactional_id.empty();
  std::unique_ptr<Deliverer> d(new Deliverer(logger, clock, options, std::move(callbacks)));
  Deliverer* self = d.get();
  auto producer = RecordProducer::Create(
      options.kafka, logger, [self](std::span<const ProducerAck> acks) { self->OnAcks(acks); },
      options.stats, options.transactions);
  if (!producer.ok()) return producer.status();
  d->producer_ = std::move(producer).value();
  if (transactional) {
    // Waits for the broker, so a cluster that is down fails the start with a clear error.
    if (Status s = d->producer_->InitTransactions(options.transactions.timeout_ms); !s.ok()) {
      return s.WithContext("transactional.id " + options.transactions.transactional_id);
    }
  }
  auto wakeup = d->producer_->MakeWakeup(d->io_);
  if (!wakeup.ok()) return wakeup.status();
  d->producer_wakeup_ = std::move(wakeup).value();
  d->ArmProducerWakeup();
  d->thread_ = std::thread([self] { self->io_.run(); });
  d->running_ = true;
  pthread_setname_np(d->thread_.native_handle(), "delivery");
  return d;
}

Deliverer::~Deliverer() { Stop(0); }

void Deliverer::Stop(int flush_timeout_ms) {
  if (!running_) return;
  RunAndWait([this, flush_timeout_ms] {
    producer_->Flush(flush_timeout_ms);
    // Whatever is still open was not committed by the owner: it must not become visible (if the
    // abort fails the broker aborts it after transaction.timeout.ms).
    if (transaction_open_) (void)producer_->AbortTransaction(flush_timeout_ms);
    transaction_open_ = false;
    due_timer_.Pause();  // nothing takes the inbox or the reports after this: the thread stops
    PublishAcks();       // those of the flush: io_.stop() drops the posted PublishAcks
    io_.stop();
  });
  thread_.join();
  running_ = false;
}

template <typename Command>
void Deliverer::PostCommand(Command command) {
  boost::asio::post(commands_, [this, command = std::move(command)]() mutable {
    TakeHandedOver();  // after every record scheduled before the command
    command();
  });
}

void Deliverer::RunAndWait(const std::function<void()>& fn) {
  if (!running_) return fn();
  std::promise<void> done;
  PostCommand([&fn, &done] {
    fn();
    done.set_value();
  });
  done.get_future().wait();
}

void Deliverer::Schedule(std::vector<DueRecord> records) {
  if (records.empty()) return;
  in_memory_.fetch_add(records.size(), std::memory_order_relaxed);
  int64_t earliest_due_ms = records.front().requested_deliver_at_ms;
  for (const DueRecord& r : records)
    earliest_due_ms = std::min(earliest_due_ms, r.requested_deliver_at_ms);
  if (inbox_.Put(std::move(records), earliest_due_ms)) {
    boost::asio::post(commands_, [this] { TakeHandedOver(); });
  }
}

void Deliverer::ProduceNow(TopicPartitionId store, EncodedRecord record, DeliveryForm form) {
  in_memory_.fetch_add(1, std::memory_order_relaxed);
  PostCommand([this, store = std::move(store), record = std::move(record), form]() mutable {
    const int64_t now_ms = clock_.now_ms();
    const uint64_t token = pending_.Add(
        PendingDelivery{std::move(store), std::nullopt, std::move(record), form, 0, false, {}});
    Produce(token, now_ms);
    DrainProducer();
  });
}

void Deliverer::Cancel(TopicPartitionId store, int64_t target_offset, bool counted) {
  PostCommand([this, store = std::move(store), target_offset, counted]() mutable {
    std::vector<RecordPosition> cancelled_at;
    for (const uint64_t token : OffsetIndexOf(store).Find(target_offset)) {
      PendingDelivery* d = pending_.Find(token);
      // In the timer: due later, or waiting to be retried (not produced, or produced and
      // failed). Without a timer it is in flight: too late.
      if (!d || !d->timer.valid()) continue;
      cancelled_at.push_back(*d->position);
      Remove(token, *d);
    }
    AcksToReport().cancels.push_back(
        {std::move(store), target_offset, std::move(cancelled_at), counted});
  });
}

Deliverer::ReleaseResult Deliverer::Release(const std::vector<TopicPartitionId>& stores,
                                            int flush_timeout_ms) {
  ReleaseResult result;
  std::promise<void> drained;
  std::future<void> done = drained.get_future();
  RunAndWait([&] {
    releasing_ = stores;
    release_drained_ = &drained;
    CheckReleaseDrained();
  });
  result.flushed = done.wait_for(milliseconds(flush_timeout_ms)) == std::future_status::ready;
  RunAndWait([&] {
    release_drained_ = nullptr;
    releasing_.clear();
    result.released = Forget(stores);
    PublishAcks();  // the owner takes them when this returns
  });
  return result;
}

Deliverer::PreparedCommit Deliverer::PrepareCommit(int flush_timeout_ms) {
  PreparedCommit prepared;
  RunAndWait([&] {
    due_timer_.HandOverDue();
    PauseDueTimer();
    prepared.cut_ms = clock_.now_ms();
    if (due_timer_.next_deadline_ms().value_or(prepared.cut_ms + 1) <= prepared.cut_ms) {
      // HandOverDue read the clock earlier: what fell due since is not produced.
      prepared.cut_ms = *due_timer_.next_deadline_ms() - 1;
    }
    if (producer_->Flush(flush_timeout_ms) != RdKafka::ERR_NO_ERROR) {
      TransactionFailed("not every record of the transaction was acknowledged within " +
                        std::to_string(flush_timeout_ms) + " ms");
    }
    prepared.status = transaction_error_;
    prepared.acks = std::exchange(transaction_acks_, AckBatch{});
    prepared.last_produced = transaction_last_produced_;
  });
  return prepared;
}

Status Deliverer::CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                                    const rd_kafka_consumer_group_metadata_t* group, int timeout_ms,
                                    bool resume) {
  Status status;
  RunAndWait([&] {
    if (!transaction_error_.ok()) {
      status = transaction_error_;
      return;
    }
    if (!offsets.empty() && !EnsureTransaction()) {
      status = transaction_error_;
      return;
    }
    if (transaction_open_) status = producer_->CommitTransaction(offsets, group, timeout_ms);
    if (!status.ok()) {
      transaction_error_ = status;  // AbortTransaction clears it
      return;
    }
    transaction_open_ = false;
    transaction_last_produced_.clear();
    transaction_records_ = 0;
    for (const RecordKey& key : refusals_settled_) refusals_.erase(key);
    refusals_settled_.clear();
    if (resume) ResumeDueTimer();
  });
  return status;
}

Deliverer::AbortResult Deliverer::AbortTransaction(int timeout_ms) {
  AbortResult result;
  RunAndWait([&] {
    PauseDueTimer();
    if (transaction_open_) result.status = producer_->AbortTransaction(timeout_ms);
    // The aborted records' reports (purged) come now, not after the error is cleared below.
    while (producer_->Poll() > 0) {
    }
    result.learnt_refusal = refusals_learnt_ != refusals_learnt_at_abort_;
    refusals_learnt_at_abort_ = refusals_learnt_;
    refusals_settled_.clear();  // not settled after all: what was learnt still holds
    transaction_open_ = false;
    transaction_records_ = 0;
    transaction_error_ = Status::Ok();
    transaction_acks_ = AckBatch{};
    transaction_last_produced_.clear();
  });
  return result;
}

void Deliverer::Resume() {
  RunAndWait([this] { ResumeDueTimer(); });
}

AckBatch Deliverer::TakeAcks() {
  std::lock_guard<std::mutex> lock(acks_mu_);
  return std::exchange(acks_, AckBatch{});
}

DeliveryStats Deliverer::TakeStats() {
  DeliveryStats stats;
  RunAndWait([&] { stats = TakeStatsNow(); });
  return stats;
}

void Deliverer::TakeStatsLater(std::function<void(DeliveryStats)> done) {
  PostCommand([this, done = std::move(done)] { done(TakeStatsNow()); });
}

// ---- on the delivery thread ----

DeliveryStats Deliverer::TakeStatsNow() {
  DeliveryStats stats = std::exchange(stats_, DeliveryStats{});
  stats.in_memory = pending_.size();
  stats.in_wheel = due_timer_.size();
  stats.in_flight = producer_->in_flight();
  return stats;
}

void Deliverer::ScheduleNow(std::vector<DueRecord> records) {
  // The index of the store the last record came from (nullptr: it has none, no cancel yet).
  // A batch is mostly one store's (a preload slice): one map lookup per run of them.
  std::optional<TopicPartitionId> looked_up;
  SourceOffsetIndex* by_offset = nullptr;
  for (size_t i = 0; i < records.size(); ++i) {
    // A preload slice is thousands of records: what falls due meanwhile is produced on time,
    // not once the slice is in.
    if (i % kScheduleCheckEveryRecords == kScheduleCheckEveryRecords - 1) {
      due_timer_.HandOverDueIfLate();
    }
    DueRecord& r = records[i];
    const int64_t deadline_ms = r.requested_deliver_at_ms;
    const int64_t source_offset = r.source_offset;
    if (!looked_up || r.store != *looked_up) {
      looked_up = r.store;
      auto index = loaded_by_offset_.find(r.store);
      by_offset = index == loaded_by_offset_.end() ? nullptr : &index->second;
    }
    const uint64_t token = pending_.Add(PendingDelivery{
        std::move(r.store), r.position, std::move(r.record), DeliveryForm::kRecord, 0, false, {}});
    WaitUntil(token, *pending_.Find(token), deadline_ms);
    if (by_offset) by_offset->Add(source_offset, token);
  }
}

void Deliverer::TakeHandedOver() {
  for (std::vector<DueRecord>& batch : inbox_.Take()) ScheduleNow(std::move(batch));
  // Armed at a wall-clock reading, as the records' due times are: a record due after it waits
  // for that wake-up whether it is in the wheel or in the inbox.
  if (inbox_.Promise(due_timer_.armed_at_ms())) {
    // Put while the batches above were scheduled: taken after the handlers queued meanwhile
    // had their turn, not in a loop that an owner handing over fast could keep going.
    boost::asio::post(commands_, [this] { TakeHandedOver(); });
  }
}

void Deliverer::TakeWaitingWork() {
  TakeHandedOver();
  DrainProducer();
}

void Deliverer::PauseDueTimer() {
  due_timer_.Pause();
  TakeWaitingWork();  // promises nothing any more
}

void Deliverer::ResumeDueTimer() {
  due_timer_.Resume();
  TakeWaitingWork();
}

void Deliverer::WaitUntil(uint64_t token, PendingDelivery& d, int64_t at_ms) {
  d.timer = due_timer_.Schedule(at_ms, token);
}

template <typename TokenAt>
void Deliverer::PrefetchAhead(size_t i, size_t count, TokenAt token_at) {
  // Slots kSlotsAhead records ahead; encodings kRecordsAhead ahead, found through slots that
  // have arrived by then: the cache misses of several records overlap.
  constexpr size_t kSlotsAhead = 8;
  constexpr size_t kRecordsAhead = 4;
  if (i + kSlotsAhead < count) pending_.PrefetchSlot(token_at(i + kSlotsAhead));
  if (i + kRecordsAhead < count) {
    if (const PendingDelivery* ahead = pending_.Find(token_at(i + kRecordsAhead))) {
      ahead->record.Prefetch();
    }
  }
}

void Deliverer::ProduceDue(const std::vector<uint64_t>& tokens, int64_t now_ms) {
  // The reports that came in since the queue was found full make room: served first, or this
  // turn would find it full again (they are quiet while the timer wakes the thread soon).
  if (std::exchange(producer_queue_was_full_, false)) DrainProducer();
  // The records fall due seconds after they were scheduled, out of the cache.
  for (size_t i = 0; i < tokens.size(); ++i) {
    PrefetchAhead(i, tokens.size(), [&tokens](size_t j) { return tokens[j]; });
    if (Produce(tokens[i], now_ms)) continue;
    // The producer's queue is full, and a refused attempt costs about what a produce does:
    // the rest of the batch waits as the refused record does, untried, in its order (trying
    // every one of a backlog of 250,000 due at once, every 10 ms, held a drain to a tenth of
    // its rate).
    for (size_t j = i + 1; j < tokens.size(); ++j) {
      if (PendingDelivery* d = pending_.Find(tokens[j])) {
        WaitUntil(tokens[j], *d, now_ms + kQueueFullRetryMs);
      }
    }
    producer_queue_was_full_ = true;
    return;
  }
  // Their reports come a round trip later; the wake-up's TakeWaitingWork (or the producer's
  // wake-up) polls them.
}

bool Deliverer::Produce(uint64_t token, int64_t now_ms) {
  PendingDelivery* d = pending_.Find(token);
  if (!d) return true;  // its store was released
  d->timer = TimerHandle{};
  // Being released: its partition's next owner delivers it.
  if (std::find(releasing_.begin(), releasing_.end(), d->store) != releasing_.end()) return true;
  if (d->position && now_ms < d->record.requested_deliver_at_ms()) {
    // Never early, even if the wheel and the clock disagree by a tick.
    WaitUntil(token, *d, d->record.requested_deliver_at_ms());
    return true;
  }
  if (transactional_) {
    if (!EnsureTransaction()) return true;
    // Refused in an aborted transaction: produced as what was learnt then.
    auto refused = refusals_.find(RecordKey{d->store, d->record.source_offset()});
    if (refused != refusals_.end() && refused->second.form >= d->form) {
      if (refused->second.dropped) {
        Settle(token, *d);
        return true;
      }
      d->record = refused->second.record;
      d->form = refused->second.form;
      d->alone = refused->second.alone;
    }
  }
  const bool alone = d->alone;
  if (alone) {
    // In a batch of its own: whatever is queued goes first (serving reports of other records
    // only), and the flush at the end sends it before anything produced after it.
    producer_->Flush(kAloneFlushMs);
    d = pending_.Find(token);
  }
  RdKafka::ErrorCode err = producer_->Produce(d->record.view(), now_ms, token);
  // Refused before it left (librdkafka's own checks, exact for this record): the open
  // transaction holds nothing of it.
  while (IsPermanentProduceError(err)) {
    if (!MoveToNextForm(*d, RdKafka::err2str(err))) {
      Settle(token, *d);
      return true;
    }
    err = producer_->Produce(d->record.view(), now_ms, token);
  }
  if (err == RdKafka::ERR__QUEUE_FULL) {
    ++stats_.queue_full;
    WaitUntil(token, *d, now_ms + kQueueFullRetryMs);
    return false;
  }
  if (err != RdKafka::ERR_NO_ERROR && transactional_) {
    // A transaction commits its records in order of their positions; one left behind could not
    // be described by a checkpoint.
    TransactionFailed("produce " + d->record.SourceId() + " to " + d->record.target_topic() + ": " +
                      RdKafka::err2str(err));
    return true;
  }
  if (err != RdKafka::ERR_NO_ERROR) {
    RetryLater(token, *d, RdKafka::err2str(err), now_ms);
    return true;
  }
  ++in_flight_[d->store];
  if (transactional_) {
    if (d->position) {
      auto [it, added] = transaction_last_produced_.emplace(d->store, *d->position);
      if (!added) it->second = std::max(it->second, *d->position);
    }
    CountTransactionRecord();
  }
  if (d->position && d->form == DeliveryForm::kRecord) {
    stats_.lateness_at_produce.Record(now_ms - d->record.due_ms());
  }
  if (alone) producer_->Flush(kAloneFlushMs);  // last: it serves this record's report
  return true;
}

bool Deliverer::NextAttemptAfterRefusal(PendingDelivery& d, RdKafka::ErrorCode err,
                                        const std::string& failure) {
  if (err == RdKafka::ERR_MSG_SIZE_TOO_LARGE && !d.alone) {
    // The broker refuses a batch whole: the record may be innocent, so it is tried again in a
    // batch of its own before it counts as refused.
    d.alone = true;
    return true;
  }
  return MoveToNextForm(d, failure);
}

void Deliverer::RetryLater(uint64_t token, PendingDelivery& d, const std::string& failure,
                           int64_t now_ms) {
  ++stats_.retries;
  const int64_t backoff_ms = BackoffMs(d.failed_attempts++);
  warnings_.Warn("produce " + d.record.SourceId() + " to " + d.record.target_topic() + ": " +
                 failure + "; retrying in " + std::to_string(backoff_ms) + " ms");
  WaitUntil(token, d, now_ms + backoff_ms);
}

bool Deliverer::MoveToNextForm(PendingDelivery& d, const std::string& failure) {
  const std::string refused =
      d.record.target_topic() + " refused " + d.record.SourceId() + ": " + failure;
  d.failed_attempts = 0;
  d.alone = false;  // a new record: whether it fits is not known
  switch (d.form) {
    case DeliveryForm::kRecord:
      ++stats_.refused;
      logger_.Warn(refused + "; sending it to the dead-letter topic " + dead_letter_topic_);
      d.record = EncodedRecord::Encode(
          DeadLetterOfDelivery(d.record.Decode(), "delivery: " + refused, dead_letter_topic_));
      d.form = DeliveryForm::kDeadLetter;
      return true;
    case DeliveryForm::kDeadLetter:
      ++stats_.reduced;
      logger_.Warn("dead letter: " + refused + "; sending it without value and headers");
      d.record =
          EncodedRecord::Encode(ReduceDeadLetter(d.record.Decode(), "dead letter: " + failure));
      d.form = DeliveryForm::kReducedDeadLetter;
      return true;
    case DeliveryForm::kReducedDeadLetter:
      ++stats_.dropped;
      logger_.Error("dropping " + d.record.SourceId() + ": even its reduced dead letter was " +
                    "refused (" + refused + ")");
      return false;
  }
  return false;
}

void Deliverer::ArmProducerWakeup() {
  if (producer_wakeup_armed_) return;
  producer_wakeup_armed_ = true;
  producer_wakeup_->Arm([this] {
    producer_wakeup_armed_ = false;
    DrainProducer();
  });
}

void Deliverer::DrainProducer() {
  // Quiet while the due timer wakes the thread soon: TakeWaitingWork polls the reports then,
  // and the thread is not woken twice (at 25,000 records a second the reports were a third of
  // its wake-ups). Never quiet while the timer is not armed, so no report waits for nothing.
  const bool quiet = due_timer_.WakesWithin(kQuietReportsMs);
  // Before the poll, which takes the queue's lock that librdkafka's callback runs under: a
  // report the poll does not serve comes after it and sees the flag.
  if (!quiet) producer_wakeup_->SetQuiet(false);
  while (producer_->Poll() > 0) {
  }
  if (quiet) producer_wakeup_->SetQuiet(true);
  if (producer_->fatal() && !fatal_reported_) {
    fatal_reported_ = true;
    callbacks_.on_fatal(Status::Unavailable("the producer hit a fatal error"));
  }
  ArmProducerWakeup();
}

void Deliverer::OnAcks(std::span<const ProducerAck> acks) {
  // As in ProduceDue, and the source-offset index's entry, found through the encoding,
  // kIndexAhead reports ahead.
  constexpr size_t kIndexAhead = 2;
  for (size_t i = 0; i < acks.size(); ++i) {
    PrefetchAhead(i, acks.size(), [acks](size_t j) { return acks[j].token; });
    if (i + kIndexAhead < acks.size()) PrefetchOffsetIndexEntry(acks[i + kIndexAhead].token);
    OnAck(acks[i].token, acks[i].err);
  }
}

SourceOffsetIndex& Deliverer::OffsetIndexOf(const TopicPartitionId& store) {
  const auto emplaced = loaded_by_offset_.try_emplace(store);
  SourceOffsetIndex& index = emplaced.first->second;
  if (emplaced.second) {
    pending_.ForEach([&](uint64_t token, const PendingDelivery& d) {
      if (d.position && d.store == store) index.Add(d.record.source_offset(), token);
    });
  }
  return index;
}

void Deliverer::PrefetchOffsetIndexEntry(uint64_t token) {
  if (loaded_by_offset_.empty()) return;  // no cancel yet: nothing to keep up to date
  const PendingDelivery* d = pending_.Find(token);
  if (!d || !d->position) return;
  if (auto loaded = loaded_by_offset_.find(d->store); loaded != loaded_by_offset_.end()) {
    loaded->second.PrefetchHome(d->record.source_offset());
  }
}

void Deliverer::OnAck(uint64_t token, RdKafka::ErrorCode err) {
  PendingDelivery* d = pending_.Find(token);
  if (!d) return;  // its store was released; the partition's next owner delivers it again
  if (auto it = in_flight_.find(d->store); it != in_flight_.end() && --it->second == 0) {
    in_flight_.erase(it);
    CheckReleaseDrained();
  }
  const int64_t now_ms = clock_.now_ms();
  if (err == RdKafka::ERR_NO_ERROR) {
    if (d->form == DeliveryForm::kRecord && d->position) {
      ++stats_.delivered;
      stats_.lateness_at_ack.Record(now_ms - d->record.due_ms());
    }
    return Settle(token, *d);
  }
  const std::string failure = "delivery failed: " + RdKafka::err2str(err);
  if (transactional_) {
    // The transaction can only be aborted now; the record is produced again after it.
    if (IsPermanentProduceError(err)) {
      PendingDelivery next = *d;
      const bool dropped = !NextAttemptAfterRefusal(next, err, failure);
      refusals_.insert_or_assign(
          RecordKey{d->store, d->record.source_offset()},
          NextAttempt{std::move(next.record), next.form, next.alone, dropped});
      ++refusals_learnt_;
    }
    return TransactionFailed(d->record.SourceId() + " to " + d->record.target_topic() + ": " +
                             failure);
  }
  if (IsPermanentProduceError(err)) {
    if (!NextAttemptAfterRefusal(*d, err, failure)) return Settle(token, *d);
    return WaitUntil(token, *d, now_ms);
  }
  RetryLater(token, *d, failure, now_ms);
}

void Deliverer::Settle(uint64_t token, PendingDelivery& d) {
  TopicPartitionId store = d.store;
  const std::optional<RecordPosition> position = d.position;
  const int64_t source_offset = d.record.source_offset();
  Remove(token, d);
  AckBatch& acks = AcksToReport();
  if (position) {
    acks.delivered.emplace_back(std::move(store), *position);
  } else {
    acks.dead_lettered.push_back({std::move(store), source_offset});
  }
}

void Deliverer::Remove(uint64_t token, PendingDelivery& d) {
  if (!refusals_.empty()) {
    RecordKey key{d.store, d.record.source_offset()};
    if (!transactional_) {
      refusals_.erase(key);
    } else if (refusals_.contains(key)) {
      refusals_settled_.push_back(std::move(key));  // until its transaction commits
    }
  }
  if (d.position && !loaded_by_offset_.empty()) {
    // Kept when it empties: built again, it would cost a walk over every record held.
    auto loaded = loaded_by_offset_.find(d.store);
    if (loaded != loaded_by_offset_.end()) loaded->second.Remove(d.record.source_offset(), token);
  }
  if (d.timer.valid()) due_timer_.Cancel(d.timer);
  pending_.Remove(token);
  // Out of memory before the owner hears of it, so its count is never below the truth.
  in_memory_.fetch_sub(1, std::memory_order_relaxed);
}

AckBatch& Deliverer::AcksToReport() {
  if (transactional_) return transaction_acks_;
  if (unpublished_acks_.empty()) boost::asio::post(io_, [this] { PublishAcks(); });
  return unpublished_acks_;
}

bool Deliverer::EnsureTransaction() {
  if (!transaction_error_.ok()) return false;
  if (transaction_open_) return true;
  if (Status s = producer_->BeginTransaction(); !s.ok()) {
    transaction_error_ = s;
    return false;
  }
  transaction_open_ = true;
  return true;
}

void Deliverer::CountTransactionRecord() {
  if (++transaction_records_ == transaction_max_records_ && callbacks_.on_transaction_full) {
    callbacks_.on_transaction_full();
  }
}

void Deliverer::TransactionFailed(const std::string& what) {
  if (transaction_error_.ok()) transaction_error_ = Status::Unavailable(what);
}

void Deliverer::PublishAcks() {
  if (unpublished_acks_.empty()) return;
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(acks_mu_);
    was_empty = acks_.empty();
    acks_.Append(std::move(unpublished_acks_));
  }
  unpublished_acks_ = AckBatch{};
  if (was_empty) NotifyAcks();
}

void Deliverer::NotifyAcks() {
  if (ack_notify_armed_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_ack_notify_) {
    next_ack_notify_ = now + milliseconds(kAckNotifyIntervalMs);
    return callbacks_.on_acks();
  }
  ack_notify_armed_ = true;
  ack_notify_timer_.expires_at(next_ack_notify_);
  ack_notify_timer_.async_wait([this](const boost::system::error_code& ec) {
    ack_notify_armed_ = false;
    if (ec) return;
    next_ack_notify_ = std::chrono::steady_clock::now() + milliseconds(kAckNotifyIntervalMs);
    callbacks_.on_acks();
  });
}

void Deliverer::CheckReleaseDrained() {
  if (release_drained_ == nullptr) return;
  for (const TopicPartitionId& store : releasing_) {
    if (in_flight_.contains(store)) return;
  }
  release_drained_->set_value();
  release_drained_ = nullptr;
}

size_t Deliverer::Forget(const std::vector<TopicPartitionId>& stores) {
  auto released = [&stores](const TopicPartitionId& id) {
    return std::find(stores.begin(), stores.end(), id) != stores.end();
  };
  std::vector<uint64_t> dropped;
  pending_.ForEach([&](uint64_t token, PendingDelivery& d) {
    if (released(d.store)) dropped.push_back(token);
  });
  for (uint64_t token : dropped) {
    if (PendingDelivery* d = pending_.Find(token); d && d->timer.valid())
      due_timer_.Cancel(d->timer);
    pending_.Remove(token);
  }
  in_memory_.fetch_sub(dropped.size(), std::memory_order_relaxed);
  for (const TopicPartitionId& store : stores) {
    in_flight_.erase(store);  // reports ignored now
    loaded_by_offset_.erase(store);
  }
  return dropped.size();
}

}  // namespace delaybridge::plugin
