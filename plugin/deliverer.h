// Deliverer: the delivery thread. It owns every record waiting to be produced or acknowledged
// (PendingDeliveries, one slab for deliveries loaded from the stores and records produced
// straight from ingest), the timer service that hands their tokens back when they fall due
// (DueTimer: the timing wheel, the asio timer, the clock), the producer and its delivery
// reports, and runs them on an io_context of its own, so a due record is produced at its
// deadline whatever the ingest thread is doing: an fdatasync, a preload walk, a checkpoint or a
// burst of consumed records never delays a delivery. (With both on one thread those stalls were
// 0.3-1.7 s of lateness; docs/BENCHMARKS.md.)
//
// The bridge's event-loop thread hands records over once they are durable (Schedule) and dead
// letters as they are rejected (ProduceNow). Scheduled records wait in a ScheduleInbox for the
// thread's next wake-up unless one is due before it; every other command takes the inbox first,
// so it runs after every record scheduled before it (and perhaps after some scheduled later). Every
// record, in every DeliveryForm (the record, its dead letter, the reduced dead letter), takes one
// path: produced when due, put back in the timer with back-off after a transient failure, and moved
// one form on when its topic refuses it for good; a reduced dead letter refused too is logged,
// counted and settled, so nothing is retried forever. The Deliverer decides what is produced and
// when it is tried again; the DueTimer only keeps the time. Acknowledgements travel back as an
// AckBatch the bridge takes (TakeAcks) when on_acks tells it some are waiting; the bridge applies
// them to its stores' trackers and offsets, which only its thread touches.
//
// With exactly_once the producer is transactional. Deliveries and dead letters go into the open
// transaction; their acknowledgements are not pushed through on_acks but returned by
// PrepareCommit, which also stops producing and flushes, so that the owner can compute, from a
// still picture, the progress that the transaction commits (CommitTransaction) or decide to let
// it run on (Resume). A record refused inside a transaction dooms it; what was learnt is
// remembered, so the record is produced in its next form (or alone) when it is handed over again
// after the abort.
//
// Thread-safety: every public method may be called from any one owner thread (the bridge's)
// while the delivery thread runs. Commands are executed in the order they were made, and each
// after the records scheduled before it.
// on_acks and on_fatal run on the delivery thread: they must only post to the owner.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/lateness_histogram.h"
#include "plugin/delivery_control.h"
#include "plugin/due_timer.h"
#include "plugin/kafka_stats_file.h"
#include "plugin/kafka_wakeup.h"
#include "plugin/log.h"
#include "plugin/pending_deliveries.h"
#include "plugin/record_handover.h"
#include "plugin/record_producer.h"
#include "plugin/schedule_inbox.h"
#include "plugin/source_offset_index.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

// Counters and lateness since the last TakeStats().
struct DeliveryStats {
  uint64_t delivered = 0;
  uint64_t retries = 0;
  uint64_t refused = 0;  // records their target refused for good, dead-lettered instead
  uint64_t reduced = 0;  // dead letters refused whole, produced without value and headers
  uint64_t dropped = 0;  // reduced dead letters refused too: logged and settled
  // Produce attempts refused because the producer's queue was full; the record waited 10 ms.
  uint64_t queue_full = 0;
  size_t in_memory = 0;  // records handed over and not yet acknowledged or released
  size_t in_wheel = 0;
  int in_flight = 0;  // produced, not yet acknowledged
  // ms after DelayedRecord::due_ms(), the time the headers asked for (not the store's effective
  // time, which is never before the record was stored): a consumer behind the delay topic shows
  // here too.
  LatenessHistogram lateness_at_produce;
  LatenessHistogram lateness_at_ack;
};

class Deliverer final : public DeliveryControl, public RecordHandover {
 public:
  struct Options {
    std::map<std::string, std::string> kafka;  // producer properties, bootstrap resolved
    int64_t tick_ms = 1;
    KafkaStatsFile* stats = nullptr;  // receives the producer's statistics; outlives the Deliverer
    // Not empty: exactly_once, with this transactional.id.
    ProducerTransactions transactions;
    size_t transaction_max_records = 0;  // on_transaction_full at this many (0: never)
    std::string dead_letter_topic;       // where records their target refuses go
  };
  struct Callbacks {
    // Acknowledgements are waiting (at most every 10 ms; TakeAcks may find them taken already).
    std::function<void()> on_acks;
    std::function<void(const Status&)> on_fatal;  // the producer cannot go on
    std::function<void()> on_transaction_full;    // exactly_once: time to cut one
  };

  // Creates the producer and starts the delivery thread.
  static Result<std::unique_ptr<Deliverer>> Start(const Options& options, Logger& logger,
                                                  const Clock& clock, Callbacks callbacks);
  // Stops the delivery thread (see Stop).
  ~Deliverer() override;

  // Waits up to flush_timeout_ms for every produced record to be acknowledged, then stops the
  // delivery thread. Records still waiting in the timer are dropped (they are in the stores).
  void Stop(int flush_timeout_ms);

  // RecordHandover.
  void Schedule(std::vector<DueRecord> records) override;
  void ProduceNow(TopicPartitionId store, EncodedRecord record, DeliveryForm form) override;
  void Cancel(TopicPartitionId store, int64_t target_offset, bool counted) override;
  size_t in_memory() const override { return in_memory_.load(std::memory_order_relaxed); }

  // For a revocation: stops producing these stores' records, waits (up to flush_timeout_ms) for
  // the acknowledgements of those already produced, then forgets every record of these stores;
  // their late reports are ignored. Blocks the caller until done; the delivery thread goes on
  // delivering the other stores' records meanwhile.
  ReleaseResult Release(const std::vector<TopicPartitionId>& stores, int flush_timeout_ms) override;

  // exactly_once. Produces everything due now, stops producing, and waits up to
  // flush_timeout_ms for every produced record's acknowledgement.
  PreparedCommit PrepareCommit(int flush_timeout_ms) override;
  // After PrepareCommit: commits the open transaction with these offsets (beginning one first
  // if none is open, so progress alone can be committed), then produces again unless told not
  // to (a revocation releases the partitions first, then Resumes).
  Status CommitTransaction(const std::map<TopicPartitionId, CommittedOffset>& offsets,
                           const rd_kafka_consumer_group_metadata_t* group, int timeout_ms,
                           bool resume) override;
  // After PrepareCommit: produces again, the transaction still open.
  void Resume() override;
  // After a failed PrepareCommit or CommitTransaction: aborts the open transaction (none of its
  // records becomes visible) and forgets what it acknowledged; producing stays stopped until
  // Resume. The owner then reloads its stores from the last committed transaction (Release
  // first). status FailedPrecondition: the producer cannot go on.
  AbortResult AbortTransaction(int timeout_ms) override;

  AckBatch TakeAcks() override;
  // Blocks the caller until the delivery thread has copied them.
  DeliveryStats TakeStats();
  // TakeStats without waiting: done runs on the delivery thread with the stats when the thread
  // gets to it, behind the work queued before (a thread that is stuck never runs it).
  void TakeStatsLater(std::function<void(DeliveryStats)> done);

 private:
  // What a record refused inside a transaction is produced as when it is handed over again after
  // the abort, by (store, source offset).
  using RecordKey = std::pair<TopicPartitionId, int64_t>;
  struct NextAttempt {
    EncodedRecord record;  // in its next form
    DeliveryForm form = DeliveryForm::kRecord;
    bool alone = false;
    bool dropped = false;  // no form left: settle it
  };

  Deliverer(Logger& logger, const Clock& clock, const Options& options, Callbacks callbacks);

  // Posts a command: it runs on the delivery thread after the records scheduled before it are
  // taken from the inbox.
  template <typename Command>
  void PostCommand(Command command);

  // All below run on the delivery thread.
  DeliveryStats TakeStatsNow();
  // Puts records handed over in the timer.
  void ScheduleNow(std::vector<DueRecord> records);
  // Takes what waits in the inbox, and promises to look again at the due timer's next wake-up
  // (posting another take if batches came meanwhile).
  void TakeHandedOver();
  // What can wait for the due timer's wake-ups (it runs after each): takes the inbox and polls
  // the producer's reports, both up to the next wake-up. Run again whenever that wake-up moves
  // later or goes away (PauseDueTimer, ResumeDueTimer).
  void TakeWaitingWork();
  void PauseDueTimer();
  void ResumeDueTimer();
  // Puts a record in the timer until at_ms.
  void WaitUntil(uint64_t token, PendingDelivery& d, int64_t at_ms);
  // DueTimer's callback: produces the records that fell due.
  void ProduceDue(const std::vector<uint64_t>& tokens, int64_t now_ms);
  // Produces the record token names, or puts it back in the timer (too early, a retry) or
  // settles it. False when the producer's queue was full: the record waits 10 ms.
  bool Produce(uint64_t token, int64_t now_ms);
  // A delivery report refused d for good (err is permanent): makes d its next attempt, in a
  // batch of its own the first time its batch was too large, else in its next form (false:
  // there is none, it was dropped and is to be settled). The one rule for both guarantees:
  // at_least_once retries d at once, exactly_once remembers it for after the abort.
  bool NextAttemptAfterRefusal(PendingDelivery& d, RdKafka::ErrorCode err,
                               const std::string& failure);
  // A transient failure: tries again after a back-off.
  void RetryLater(uint64_t token, PendingDelivery& d, const std::string& failure, int64_t now_ms);
  // The record's topic refused it for good: moves it to its next form (false: there is none,
  // it was dropped and is settled).
  bool MoveToNextForm(PendingDelivery& d, const std::string& failure);
  void ArmProducerWakeup();
  // Polls every report, then keeps the producer's wake-up quiet if the due timer wakes the
  // thread within kQuietReportsMs.
  void DrainProducer();
  // The reports one producer call served: each settled by OnAck, the records a few reports
  // ahead fetched meanwhile (they were produced milliseconds ago, out of the cache since).
  void OnAcks(std::span<const ProducerAck> acks);
  // Before the record at index i of a batch of count is produced or settled: asks for the
  // memory of the records a few places further on. token_at(j) is the token at index j.
  template <typename TokenAt>
  void PrefetchAhead(size_t i, size_t count, TokenAt token_at);
  // Asks for the source-offset index's slot of the record token names (one loaded from a store).
  void PrefetchOffsetIndexEntry(uint64_t token);
  // The store's index of loaded_by_offset_, made from pending_ when the store has none yet: a
  // walk over every record held, once per store (a store's first cancel).
  SourceOffsetIndex& OffsetIndexOf(const TopicPartitionId& store);
  void OnAck(uint64_t token, RdKafka::ErrorCode err);
  // Acknowledged (or dropped): out of memory, and reported to the owner.
  void Settle(uint64_t token, PendingDelivery& d);
  // Out of the timer, the slab and the source-offset index.
  void Remove(uint64_t token, PendingDelivery& d);
  // The batch a settled record or a cancel's answer is added to: the open transaction's
  // acknowledgements (exactly_once, returned by PrepareCommit), else unpublished_acks_, which
  // PublishAcks hands to the owner once the current handler is done: a poll that serves a batch
  // of delivery reports wakes the owner once, not once per report (which woke the loop 4,400
  // times a second at 25k records a second). A reference, not a callback given the batch: a
  // std::function of the settling record's fields would allocate for every record.
  AckBatch& AcksToReport();
  size_t Forget(const std::vector<TopicPartitionId>& stores);
  // Release: fulfils release_drained_ once no record of a releasing store is in flight.
  void CheckReleaseDrained();
  void PublishAcks();
  // Calls on_acks now, or at most kAckNotifyIntervalMs after the last call: nothing waits on
  // the owner applying acknowledgements (revocation takes them itself), so it wakes for them at
  // most that often.
  void NotifyAcks();
  // exactly_once: begins a transaction unless one is open. False (and txn_error_ set) if it
  // cannot.
  bool EnsureTransaction();
  // exactly_once: a record of the open transaction failed; the first failure is kept.
  void TransactionFailed(const std::string& what);
  // exactly_once: a record went into the open transaction.
  void CountTransactionRecord();
  // Runs fn on the delivery thread after every command made before, and waits for it (runs it
  // here once the thread has stopped).
  void RunAndWait(const std::function<void()>& fn);

  Logger& logger_;
  const Clock& clock_;
  Callbacks callbacks_;

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::strand<boost::asio::io_context::executor_type> commands_;
  std::unique_ptr<RecordProducer> producer_;
  std::unique_ptr<KafkaWakeup> producer_wakeup_;
  bool producer_wakeup_armed_ = false;
  bool fatal_reported_ = false;
  // ProduceDue found the producer's queue full: the next one serves the reports first.
  bool producer_queue_was_full_ = false;
  WarningThrottle warnings_;

  const std::string dead_letter_topic_;
  DueTimer due_timer_;   // the tokens of pending_ waiting for their time
  ScheduleInbox inbox_;  // records scheduled, not yet taken by the delivery thread
  PendingDeliveries pending_;
  // The records loaded from each store (those with a position), by source offset: what Cancel
  // looks up. Made for a store at its first cancel (OffsetIndexOf) and kept up to date from
  // then on, until the store is released: a store nobody cancels in pays nothing per record
  // (indexing every record of every store is 3.5% of the bridge's CPU samples at 100k records
  // a second). Sized like pending_, so bounded by wheel.max_preloaded_records.
  std::map<TopicPartitionId, SourceOffsetIndex> loaded_by_offset_;
  std::atomic<size_t> in_memory_{0};
  std::map<TopicPartitionId, size_t> in_flight_;   // produced, not yet reported, per store
  std::vector<TopicPartitionId> releasing_;        // Release: produce none of theirs
  std::promise<void>* release_drained_ = nullptr;  // Release is waiting on it

  // exactly_once (delivery thread). Between PrepareCommit and CommitTransaction/Resume (and
  // after AbortTransaction, until Resume) due_timer_ is paused: nothing due is produced.
  const bool transactional_;
  const size_t transaction_max_records_;
  size_t transaction_records_ = 0;  // produced in the open transaction
  bool transaction_open_ = false;
  Status transaction_error_;
  AckBatch transaction_acks_;  // acknowledged, not yet returned by PrepareCommit
  std::map<TopicPartitionId, RecordPosition> transaction_last_produced_;
  // Survives aborts, not records: an entry goes when the transaction its record settled in
  // commits (a record settled in its next form in an aborted transaction is produced again).
  std::map<RecordKey, NextAttempt> refusals_;
  std::vector<RecordKey> refusals_settled_;  // settled in the open transaction
  uint64_t refusals_learnt_ = 0;             // refusals_ entries made or advanced
  uint64_t refusals_learnt_at_abort_ = 0;

  AckBatch unpublished_acks_;  // reported in the current handler, published after it
  boost::asio::steady_timer ack_notify_timer_{io_};
  bool ack_notify_armed_ = false;
  std::chrono::steady_clock::time_point next_ack_notify_;  // on_acks not called before then
  std::mutex acks_mu_;
  AckBatch acks_;  // guarded by acks_mu_

  DeliveryStats stats_;

  std::thread thread_;    // last: started after everything above exists
  bool running_ = false;  // owner side: the thread was started and not yet joined
};

}  // namespace delaybridge::plugin
