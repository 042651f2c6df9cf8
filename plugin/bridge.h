// Bridge: the DelayBridge event loop. One boost::asio::io_context thread owns all bridge state
// and runs every step: draining the consumer (woken by librdkafka through an eventfd),
// ingesting records into per-partition stores, the group commit (Sync, then commit source
// offsets), the preloader, the delivery timer (armed at the wheel's next deadline, never
// ticking while nothing is due), delivery reports, checkpoints, stats and signals. The
// guarantees and the re-delivery bound are described in docs/bridge.md.
//
// Thread-safety: construct, Run() and destroy on one thread. librdkafka's internal threads
// never touch bridge state: callbacks arrive from Poll()/Flush() calls made on the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/lateness_histogram.h"
#include "core/timing_wheel.h"
#include "plugin/config.h"
#include "plugin/ingest.h"
#include "plugin/kafka_wakeup.h"
#include "plugin/log.h"
#include "plugin/partition_store.h"
#include "plugin/pending_deliveries.h"
#include "plugin/record_producer.h"
#include "plugin/source_consumer.h"

namespace delaybridge::plugin {

class Bridge final : public RebalanceListener {
 public:
  // bootstrap_servers: the resolved broker list (the embedded broker's address when the
  // configuration says "embedded").
  Bridge(const BridgeConfig& config, std::string bootstrap_servers, Logger& logger,
         const Clock& clock);
  ~Bridge() override;

  // Runs until SIGTERM/SIGINT (then shuts down cleanly and returns 0) or an unrecoverable
  // error (returns 1 after the same shutdown steps, as far as they still work).
  int Run();

  void OnAssigned(const std::vector<TopicPartitionId>& partitions) override;
  void OnRevoked(const std::vector<TopicPartitionId>& partitions) override;

 private:
  // A rejected record on its way to the dead-letter topic.
  struct DeadLetterPending {
    TopicPartitionId source;
    int64_t offset = 0;
    DelayedRecord record;
    uint32_t failed_attempts = 0;
  };
  // Dead-letter tokens have this bit set; delivery tokens (PendingDeliveries) never do.
  static constexpr uint64_t kDeadLetterBit = uint64_t{1} << 63;

  Status Start();
  void Shutdown();
  void Fail(const Status& status);

  // Consumer side.
  void ArmConsumerWakeup();
  void ApplyBackpressure();
  void DrainConsumer();
  void Ingest(const IncomingRecord& in);
  void DeadLetter(PartitionStore& store, const IncomingRecord& in, const std::string& reason);
  void GroupCommit();

  // Delivery side.
  void Preload();
  void Schedule(uint64_t token, int64_t deadline_ms);
  void RearmDeliveryTimer();
  void DeliverDue();
  void DeliverIfDue();
  void ProduceDelivery(uint64_t token, int64_t now_ms);
  void ProduceDeadLetter(uint64_t token, int64_t now_ms);
  void ArmProducerWakeup();
  void DrainProducer();
  void OnAck(uint64_t token, RdKafka::ErrorCode err);
  void OnDeliveryAck(uint64_t token, RdKafka::ErrorCode err);
  void OnDeadLetterAck(uint64_t token, RdKafka::ErrorCode err);
  void PersistCheckpoints();
  void LogStats();
  void WarnThrottled(const std::string& message);

  void CloseStores(const std::vector<TopicPartitionId>& ids);
  void Every(boost::asio::steady_timer& timer, std::chrono::milliseconds period,
             void (Bridge::*step)());

  const BridgeConfig config_;
  const std::string bootstrap_servers_;
  Logger& logger_;
  const Clock& clock_;
  IngestPolicy policy_;

  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer commit_timer_;
  boost::asio::steady_timer preload_timer_;
  boost::asio::steady_timer checkpoint_timer_;
  boost::asio::steady_timer stats_timer_;
  boost::asio::steady_timer safety_poll_timer_;
  boost::asio::steady_timer delivery_timer_;
  std::optional<int64_t> delivery_timer_at_ms_;  // set while the delivery timer is armed

  std::unique_ptr<RecordProducer> producer_;
  std::unique_ptr<SourceConsumer> consumer_;
  std::unique_ptr<KafkaWakeup> producer_wakeup_;
  std::unique_ptr<KafkaWakeup> consumer_wakeup_;
  bool producer_wakeup_armed_ = false;
  bool consumer_wakeup_armed_ = false;

  TimingWheel wheel_;
  PendingDeliveries pending_;
  std::map<uint64_t, DeadLetterPending> dead_letters_;
  uint64_t next_dead_letter_id_ = 0;
  std::map<TopicPartitionId, std::unique_ptr<PartitionStore>> stores_;

  LatenessHistogram lateness_at_produce_;  // per stats interval
  LatenessHistogram lateness_at_ack_;
  uint64_t consumed_ = 0;
  uint64_t stored_ = 0;
  uint64_t already_stored_ = 0;  // re-consumed after a crash, skipped
  uint64_t refetched_ = 0;       // returned again by the consumer in this run, skipped
  uint64_t dead_lettered_ = 0;
  uint64_t delivered_ = 0;
  uint64_t delivery_retries_ = 0;
  uint64_t corrupt_records_ = 0;
  int64_t last_warning_ms_ = 0;
  uint64_t suppressed_warnings_ = 0;

  bool consumption_paused_ = false;  // in-memory records reached max_preloaded_records
  bool stopping_ = false;
  int exit_code_ = 0;
};

}  // namespace delaybridge::plugin
