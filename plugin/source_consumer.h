// SourceConsumer: the consumer-group member reading the delay topics. Offsets are never
// committed automatically: the bridge commits each partition's low watermark with its progress
// in the offset's metadata (plugin/progress_metadata.h). Membership is static when a
// group.instance.id is given (a restarted instance gets its partitions back without waiting for
// the session timeout) and assignment is cooperative-sticky by default (a joining or leaving
// instance moves only the partitions it must). Partition assignment and revocation are reported
// to a RebalanceListener, called on the polling thread before the assignment changes, so the
// listener can open stores (and choose where reading starts) or sync, commit and close them.
//
// Thread-safety: one owner thread calls every method; rebalance callbacks arrive on it from
// Poll() and Close().
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "plugin/consumer_control.h"
#include "plugin/group_metadata.h"
#include "plugin/ingest.h"
#include "plugin/kafka_event_logger.h"
#include "plugin/kafka_wakeup.h"
#include "plugin/log.h"
#include "plugin/topic_partition.h"

namespace delaybridge::plugin {

class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  // Returns where to start reading each partition; a partition left out starts at the group's
  // committed offset (or auto.offset.reset when there is none).
  virtual std::map<TopicPartitionId, int64_t> OnAssigned(
      const std::vector<TopicPartitionId>& partitions) = 0;
  // lost: the group already gave them to another member (this one missed its session timeout,
  // e.g. it was frozen), so nothing may be committed for them any more.
  virtual void OnRevoked(const std::vector<TopicPartitionId>& partitions, bool lost) = 0;
};

class SourceConsumer final : public ConsumerControl {
 public:
  // group_instance_id: empty for dynamic membership.
  static Result<std::unique_ptr<SourceConsumer>> Create(
      const std::map<std::string, std::string>& kafka, const std::string& group_id,
      const std::string& group_instance_id, Logger& logger, RebalanceListener& listener,
      KafkaStatsFile* stats = nullptr);
  ~SourceConsumer() override;

  Status Subscribe(const std::vector<std::string>& topics);

  // Returns up to max_records records without blocking; rebalances and errors are served
  // as a side effect. Consumer errors are logged (the broker being down is not fatal).
  std::vector<IncomingRecord> Poll(size_t max_records);

  // Commits "resume at offset", with its metadata, for each partition.
  void CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override;
  Status CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) override;

  Result<std::map<TopicPartitionId, CommittedOffset>> Committed(
      const std::vector<TopicPartitionId>& partitions, int timeout_ms) override;

  // Moves the fetch position of assigned partitions (after the bridge reloaded them); a
  // partition without an offset (none was ever committed) restarts where auto.offset.reset
  // starts a new group: its beginning, unless the kafka map says latest.
  Status Seek(const std::vector<TopicPartitionId>& partitions,
              const std::map<TopicPartitionId, int64_t>& offsets) override;

  // Stops (or restarts) fetching from every assigned partition while staying in the group:
  // Poll() keeps serving rebalances but returns no records from paused partitions.
  Status SetPaused(bool paused);

  // For a transaction's offsets (exactly_once), taken when they are committed. Unavailable
  // while this consumer is not a member of the group (joining again after losing its
  // partitions): a transaction committed without a member id would not be fenced.
  Result<GroupMetadata> CurrentGroupMetadata() const override;

  // Whether this consumer is a member of its group now.
  bool member() const { return !MemberId().empty(); }
  // Records not yet read: the partition's end (high watermark) as of the latest fetch response
  // minus the consumer's position (both count transaction markers, so the lag of a
  // transactional topic still reaches 0); nullopt before both are known.
  std::optional<int64_t> Lag(const TopicPartitionId& id) const;
  std::optional<int64_t> Position(const TopicPartitionId& id) const override;
  Result<Watermarks> QueryWatermarks(const TopicPartitionId& id, int timeout_ms) const override;
  // Empty while the brokers answer; else why they seem not to: every broker connection is down
  // (librdkafka said so, and nothing answered since), or the latest offset commit failed.
  // Cleared by the next commit that succeeds, or BrokersAnswered (a transaction committed, a
  // probe answered).
  std::string BrokersProblem() const;
  bool all_brokers_down() const { return events_.all_brokers_down(); }
  void BrokersAnswered() override;
  // Asks the brokers for metadata, blocking up to timeout_ms: OK when one answered. Safe on any
  // thread (librdkafka's handle is), so a readiness check can ask off the event loop.
  Status ProbeBrokers(int timeout_ms) const;

  // Leaves the group (revocation callbacks run first).
  void Close();
  bool fatal() const { return events_.fatal(); }

  Result<std::unique_ptr<KafkaWakeup>> MakeWakeup(boost::asio::io_context& io);

 private:
  class Rebalance : public RdKafka::RebalanceCb {
   public:
    Rebalance(Logger& logger, RebalanceListener& listener) : logger_(logger), listener_(listener) {}
    void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                      std::vector<RdKafka::TopicPartition*>& partitions) override;

   private:
    Logger& logger_;
    RebalanceListener& listener_;
  };

  // Logs failed asynchronous commits and remembers the latest outcome (served from Poll on the
  // owner thread).
  class CommitResults : public RdKafka::OffsetCommitCb {
   public:
    CommitResults(Logger& logger, KafkaEventLogger& events) : logger_(logger), events_(events) {}
    void offset_commit_cb(RdKafka::ErrorCode err,
                          std::vector<RdKafka::TopicPartition*>& offsets) override;
    const std::string& last_failure() const { return last_failure_; }
    void Succeeded();

   private:
    Logger& logger_;
    KafkaEventLogger& events_;
    std::string last_failure_;  // empty: the latest commit succeeded
  };

  SourceConsumer(Logger& logger, RebalanceListener& listener, KafkaStatsFile* stats);
  std::string MemberId() const;  // empty while not a member

  Logger& logger_;
  KafkaEventLogger events_;
  Rebalance rebalance_;
  CommitResults commit_results_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  int64_t reset_offset_ = RdKafka::Topic::OFFSET_BEGINNING;  // auto.offset.reset, for Seek
  bool closed_ = false;
};

}  // namespace delaybridge::plugin
