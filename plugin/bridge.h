// Bridge: the DelayBridge event loop. One boost::asio::io_context thread (the ingest side) owns
// the stores and runs draining the consumer (woken by librdkafka through an eventfd),
// ingesting records into per-partition stores, the group commit, the preloader, applying
// acknowledgements, checkpoints, rebalances, stats and signals. Durable
// records due soon are handed to the Deliverer, whose own thread runs the timing wheel and the
// producer, so no disk or ingest work ever delays a delivery. The guarantees and the
// re-delivery bound are described in docs/bridge.md.
//
// The rules about what is committed when are in parts the bridge wires: OffsetCommitter (group
// commit, markers, at-least-once progress commits), PartitionRevoker (the order of a
// revocation) and, with delivery.guarantee exactly_once, TransactionCutter (every
// transaction_interval_ms a transaction commits the deliveries and dead letters produced since
// the last one together with each partition's progress; a failed one is aborted and the stores
// are reloaded from the last committed one, or, when the producer cannot go on, the bridge
// stops).
//
// Thread-safety: construct, Run() and destroy on one thread. librdkafka's internal threads
// never touch bridge state: consumer callbacks arrive from calls made on the loop, and the
// Deliverer only posts to it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/lateness_histogram.h"
#include "plugin/bridge_metrics.h"
#include "plugin/clock_step_watch.h"
#include "plugin/config.h"
#include "plugin/deliverer.h"
#include "plugin/disk_worker.h"
#include "plugin/http_server.h"
#include "plugin/ingest_pipeline.h"
#include "plugin/kafka_stats_file.h"
#include "plugin/kafka_wakeup.h"
#include "plugin/log.h"
#include "plugin/offset_committer.h"
#include "plugin/partition_assigner.h"
#include "plugin/partition_revoker.h"
#include "plugin/partition_store.h"
#include "plugin/source_consumer.h"
#include "plugin/transaction_cutter.h"
#include "plugin/warning_throttle.h"

namespace delaybridge::plugin {

class Bridge final : public RebalanceListener {
 public:
  // bootstrap_servers: the resolved broker list (the embedded broker's address when the
  // configuration says "embedded").
  Bridge(const BridgeConfig& config, std::string bootstrap_servers, Logger& logger,
         const Clock& clock);
  ~Bridge() override;

  // Runs until SIGTERM/SIGINT (then shuts down cleanly and returns 0) or an unrecoverable
  // error (returns 1 after the same shutdown steps, as far as they still work). Returns 2 at
  // once when metrics.listen cannot be bound (in use, not a local address).
  int Run();

  std::map<TopicPartitionId, int64_t> OnAssigned(
      const std::vector<TopicPartitionId>& partitions) override;
  void OnRevoked(const std::vector<TopicPartitionId>& partitions, bool lost) override;

 private:
  Status Start();
  void Shutdown();
  void Fail(const Status& status);

  // Consumer side.
  void ArmConsumerWakeup();
  void ApplyBackpressure();
  void DrainConsumer();

  // The transaction timer's step: cuts a transaction, or tries again soon when the cut was not
  // exact.
  void OnTransactionTimer();
  void ScheduleTransaction(std::chrono::milliseconds delay);
  // exactly_once: a transaction failed, nothing may be committed or marked any more.
  bool transaction_failed() const { return cutter_ && cutter_->transaction_failed(); }
  // TransactionCutter's hook after a rollback closed the stores: see Hooks::reopen_stores.
  Result<std::map<TopicPartitionId, int64_t>> ReopenStores(
      const std::vector<TopicPartitionId>& dropped, const std::vector<TopicPartitionId>& reload);

  // Delivery side (the Deliverer does the delivering).
  void Preload();
  void ApplyAcks();
  void ApplyAckBatch(const AckBatch& acks);
  void PersistCheckpoints();
  // Adds the Deliverer's counts since it last gave them to the totals and the histograms.
  void AddDeliveryStats(const DeliveryStats& d);
  void LogStats();

  // metrics.listen: /metrics, /healthz and /readyz (docs/operations.md, "Metrics and health").
  Status StartHttp();
  // Takes the delivery thread's stats without blocking the loop: answered runs on the loop with
  // them (after AddDeliveryStats), or timed_out when the thread did not answer within
  // kDeliveryAnswerMs (its stats still count when they come).
  void AskDeliveryThread(std::function<void(const DeliveryStats&)> answered,
                         std::function<void()> timed_out);
  BridgeMetrics GatherMetrics(const DeliveryStats& d);
  void ServeMetrics(HttpReply reply);
  // 200 once the delivery thread answered (the loop answers by running this at all); 503 when it
  // did not.
  void ServeHealth(HttpReply reply);
  // 200 while partitions are assigned and the brokers answer; 503 with the reason otherwise.
  void ServeReady(HttpReply reply);
  // After librdkafka reported every broker connection down, nothing says they are back until a
  // request succeeds: asks for metadata on a thread of its own (one at a time), and clears the
  // report when a broker answers.
  void ProbeBrokersInBackground();
  void JoinBrokerProbe();

  void Every(boost::asio::steady_timer& timer, std::chrono::milliseconds period,
             std::function<void()> step);

  const BridgeConfig config_;
  const std::string bootstrap_servers_;
  Logger& logger_;
  const Clock& clock_;

  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer commit_timer_;
  boost::asio::steady_timer preload_timer_;
  boost::asio::steady_timer checkpoint_timer_;
  boost::asio::steady_timer progress_timer_;
  boost::asio::steady_timer transaction_timer_;
  boost::asio::steady_timer stats_timer_;
  boost::asio::steady_timer safety_poll_timer_;
  WarningThrottle warnings_;
  DiskWorker disk_;                              // posts to io_, so declared after it
  std::unique_ptr<KafkaStatsFile> kafka_stats_;  // null unless configured; outlives the clients
  std::unique_ptr<HttpServer> http_;             // null unless metrics.listen; uses io_
  std::thread broker_probe_;                     // ProbeBrokersInBackground; joined before reuse
  bool broker_probe_running_ = false;

  std::unique_ptr<Deliverer> deliverer_;  // posts to io_, so declared after it
  std::unique_ptr<SourceConsumer> consumer_;
  std::unique_ptr<KafkaWakeup> consumer_wakeup_;
  bool consumer_wakeup_armed_ = false;

  PartitionStores stores_;
  // Use stores_, the DiskWorker, the Deliverer and the consumer: made in Start() after them.
  std::unique_ptr<PartitionAssigner> assigner_;
  std::unique_ptr<IngestPipeline> ingest_;
  std::unique_ptr<OffsetCommitter> committer_;
  std::unique_ptr<TransactionCutter> cutter_;  // null unless exactly_once
  std::unique_ptr<PartitionRevoker> revoker_;

  uint64_t consumed_ = 0;
  LatenessHistogram lateness_ms_;                // every acknowledged delivery, for /metrics
  LatenessHistogram stats_lateness_at_produce_;  // since the last stats line
  LatenessHistogram stats_lateness_at_ack_;      // since the last stats line
  uint64_t delivered_ = 0;                       // totals of the Deliverer's per-interval stats
  uint64_t delivery_retries_ = 0;
  uint64_t delivery_queue_full_ = 0;
  uint64_t delivery_refused_ = 0;  // refused for good by the target, dead-lettered instead
  uint64_t dead_letters_reduced_ = 0;
  uint64_t dead_letters_dropped_ = 0;
  uint64_t corrupt_records_ = 0;  // unreadable records the preloader skipped
  uint64_t preload_retries_ = 0;  // walks stopped at a second unreadable for now
  ClockStepWatch clock_steps_;

  bool consumption_paused_ = false;  // in-memory records reached max_preloaded_records
  bool stopping_ = false;
  int exit_code_ = 0;
};

}  // namespace delaybridge::plugin
