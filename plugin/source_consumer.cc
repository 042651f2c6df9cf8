#include "plugin/source_consumer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <memory>

#include "plugin/partition_list.h"

namespace delaybridge::plugin {

namespace {

constexpr int kSeekTimeoutMs = 10'000;

std::vector<TopicPartitionId> ToIds(const std::vector<RdKafka::TopicPartition*>& partitions) {
  std::vector<TopicPartitionId> ids;
  for (const auto* tp : partitions) ids.push_back({tp->topic(), tp->partition()});
  return ids;
}

// Read straight from librdkafka's message: its C++ wrapper would copy each header twice more.
IncomingRecord ToIncoming(const rd_kafka_message_t& m) {
  IncomingRecord r;
  r.topic = rd_kafka_topic_name(m.rkt);
  r.partition = m.partition;
  r.offset = m.offset;
  rd_kafka_timestamp_type_t type;
  const int64_t timestamp_ms = rd_kafka_message_timestamp(&m, &type);
  if (type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE && timestamp_ms >= 0) r.timestamp_ms = timestamp_ms;
  if (m.key) r.key.emplace(static_cast<const char*>(m.key), m.key_len);
  if (m.payload) r.value.emplace(static_cast<const char*>(m.payload), m.len);
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    r.headers.reserve(rd_kafka_header_cnt(headers));
    const char* name;
    const void* value;
    size_t size;
    for (size_t i = 0; !rd_kafka_header_get_all(headers, i, &name, &value, &size); ++i) {
      KafkaHeader& header = r.headers.emplace_back(KafkaHeader{name, std::nullopt});
      if (value) header.value.emplace(static_cast<const char*>(value), size);
    }
  }
  return r;
}

}  // namespace

void SourceConsumer::Rebalance::rebalance_cb(RdKafka::KafkaConsumer* consumer,
                                             RdKafka::ErrorCode err,
                                             std::vector<RdKafka::TopicPartition*>& partitions) {
  const bool cooperative = consumer->rebalance_protocol() == "COOPERATIVE";
  if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
    const std::map<TopicPartitionId, int64_t> starts = listener_.OnAssigned(ToIds(partitions));
    for (auto* tp : partitions) {
      if (auto it = starts.find({tp->topic(), tp->partition()}); it != starts.end()) {
        tp->set_offset(it->second);
      }
    }
    if (cooperative) {
      if (RdKafka::Error* e = consumer->incremental_assign(partitions)) {
        logger_.Error("incremental_assign failed: " + e->str());
        delete e;
      }
    } else {
      consumer->assign(partitions);
    }
  } else {
    listener_.OnRevoked(ToIds(partitions), consumer->assignment_lost());
    if (cooperative) {
      if (RdKafka::Error* e = consumer->incremental_unassign(partitions)) {
        logger_.Error("incremental_unassign failed: " + e->str());
        delete e;
      }
    } else {
      consumer->unassign();
    }
  }
}

void SourceConsumer::CommitResults::offset_commit_cb(
    RdKafka::ErrorCode err, std::vector<RdKafka::TopicPartition*>& offsets) {
  if (err == RdKafka::ERR_NO_ERROR || err == RdKafka::ERR__NO_OFFSET) return Succeeded();
  // Not fatal: a later commit covers the same records; until then a crash re-reads them and
  // the source-offset marker keeps them from being stored twice.
  last_failure_ = "offset commit of " + std::to_string(offsets.size()) +
                  " partition(s) failed: " + RdKafka::err2str(err);
  logger_.Warn(last_failure_);
}

void SourceConsumer::CommitResults::Succeeded() {
  last_failure_.clear();
  events_.BrokersAnswered();
}

SourceConsumer::SourceConsumer(Logger& logger, RebalanceListener& listener, KafkaStatsFile* stats)
    : logger_(logger),
      events_(logger, "consumer", stats),
      rebalance_(logger, listener),
      commit_results_(logger, events_) {}

SourceConsumer::~SourceConsumer() { Close(); }

Result<std::unique_ptr<SourceConsumer>> SourceConsumer::Create(
    const std::map<std::string, std::string>& kafka, const std::string& group_id,
    const std::string& group_instance_id, Logger& logger, RebalanceListener& listener,
    KafkaStatsFile* stats) {
  std::unique_ptr<SourceConsumer> c(new SourceConsumer(logger, listener, stats));
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string errstr;
  // A new group starts at the beginning of the delay topics: records produced before the
  // bridge first joined are delayed records too. Cooperative rebalancing, so an instance
  // joining or leaving does not stop the others' deliveries. A fetch waits up to 10 ms for a
  // megabyte: a delayed record is not due for a while after it arrives, and fetches answered as
  // soon as one record is there woke the loop, and this consumer's broker thread, 600 times a
  // second at 25,000 records a second (docs/configuration.md). The user's kafka map may
  // override these.
  const std::pair<const char*, const char*> kDefaults[] = {
      {"auto.offset.reset", "earliest"},
      {"partition.assignment.strategy", "cooperative-sticky"},
      {"fetch.wait.max.ms", "10"},
      {"fetch.min.bytes", "1048576"}};
  for (const auto& [key, value] : kDefaults) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(std::string("consumer: ") + key + ": " + errstr);
    }
  }
  for (const auto& [key, value] : kafka) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument("consumer property " + key + ": " + errstr);
    }
  }
  if (auto reset = kafka.find("auto.offset.reset"); reset != kafka.end()) {
    const std::string& to = reset->second;
    if (to == "latest" || to == "largest" || to == "end") {
      c->reset_offset_ = RdKafka::Topic::OFFSET_END;
    }
  }
  const std::pair<const char*, std::string> kOwned[] = {{"group.id", group_id},
                                                        {"enable.auto.commit", "false"},
                                                        {"enable.auto.offset.store", "false"}};
  for (const auto& [key, value] : kOwned) {
    if (conf->set(key, value, errstr) != RdKafka::Conf::CONF_OK) {
      return Status::InvalidArgument(std::string("consumer property ") + key + ": " + errstr);
    }
  }
  if (!group_instance_id.empty() &&
      conf->set("group.instance.id", group_instance_id, errstr) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("group_instance_id: " + errstr);
  }
  if (conf->set("event_cb", &c->events_, errstr) != RdKafka::Conf::CONF_OK ||
      conf->set("rebalance_cb", &c->rebalance_, errstr) != RdKafka::Conf::CONF_OK ||
      conf->set("offset_commit_cb", &c->commit_results_, errstr) != RdKafka::Conf::CONF_OK) {
    return Status::InvalidArgument("consumer callbacks: " + errstr);
  }
  c->consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), errstr));
  if (!c->consumer_) return Status::InvalidArgument("create consumer: " + errstr);
  return c;
}

Status SourceConsumer::Subscribe(const std::vector<std::string>& topics) {
  const RdKafka::ErrorCode err = consumer_->subscribe(topics);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("subscribe: " + RdKafka::err2str(err));
  }
  return Status::Ok();
}

std::vector<IncomingRecord> SourceConsumer::Poll(size_t max_records) {
  std::vector<IncomingRecord> records;
  // One message per call, not rd_kafka_consume_batch_queue (about 480 ns less per record,
  // docs/BENCHMARKS.md): before librdkafka 2.1.0 the batch calls can skip offsets of a partition
  // that is paused or resumed (confluentinc/librdkafka#4208), and the bridge pauses partitions
  // for backpressure.
  while (records.size() < max_records) {
    // Serves rebalance callbacks too, as the C++ wrapper's consume() does (it calls this).
    const std::unique_ptr<rd_kafka_message_t, decltype(&rd_kafka_message_destroy)> m(
        rd_kafka_consumer_poll(consumer_->c_ptr(), 0), &rd_kafka_message_destroy);
    if (!m) break;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      records.push_back(ToIncoming(*m));
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      logger_.Warn(std::string("consumer: ") + rd_kafka_message_errstr(m.get()));
    }
  }
  return records;
}

void SourceConsumer::CommitAsync(const std::map<TopicPartitionId, CommittedOffset>& offsets) {
  if (offsets.empty()) return;
  PartitionList list(offsets);
  const rd_kafka_resp_err_t err = rd_kafka_commit(consumer_->c_ptr(), list.get(), 1);
  if (err) logger_.Warn(std::string("commit offsets: ") + rd_kafka_err2str(err));
}

Status SourceConsumer::CommitSync(const std::map<TopicPartitionId, CommittedOffset>& offsets) {
  if (offsets.empty()) return Status::Ok();
  PartitionList list(offsets);
  const rd_kafka_resp_err_t err = rd_kafka_commit(consumer_->c_ptr(), list.get(), 0);
  if (err) return Status::Unavailable(std::string("commit offsets: ") + rd_kafka_err2str(err));
  commit_results_.Succeeded();
  return Status::Ok();
}

Result<std::map<TopicPartitionId, CommittedOffset>> SourceConsumer::Committed(
    const std::vector<TopicPartitionId>& partitions, int timeout_ms) {
  PartitionList list(partitions.size());
  for (const auto& id : partitions) list.Add(id);
  const rd_kafka_resp_err_t err = rd_kafka_committed(consumer_->c_ptr(), list.get(), timeout_ms);
  if (err) {
    return Status::Unavailable(std::string("read committed offsets: ") + rd_kafka_err2str(err));
  }
  std::map<TopicPartitionId, CommittedOffset> committed;
  for (int i = 0; i < list.get()->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list.get()->elems[i];
    if (tp.err) {
      return Status::Unavailable("read committed offset of " + std::string(tp.topic) + "-" +
                                 std::to_string(tp.partition) + ": " + rd_kafka_err2str(tp.err));
    }
    if (tp.offset < 0) continue;
    CommittedOffset c{tp.offset, std::string()};
    if (tp.metadata != nullptr)
      c.metadata.assign(static_cast<const char*>(tp.metadata), tp.metadata_size);
    committed[{tp.topic, tp.partition}] = std::move(c);
  }
  return committed;
}

Status SourceConsumer::Seek(const std::vector<TopicPartitionId>& partitions,
                            const std::map<TopicPartitionId, int64_t>& offsets) {
  for (const auto& id : partitions) {
    const auto it = offsets.find(id);
    std::unique_ptr<RdKafka::TopicPartition> tp(RdKafka::TopicPartition::create(
        id.topic, id.partition, it != offsets.end() ? it->second : reset_offset_));
    if (RdKafka::ErrorCode err = consumer_->seek(*tp, kSeekTimeoutMs);
        err != RdKafka::ERR_NO_ERROR) {
      return Status::Unavailable("seek " + id.ToString() + ": " + RdKafka::err2str(err));
    }
  }
  return Status::Ok();
}

Status SourceConsumer::SetPaused(bool paused) {
  std::vector<RdKafka::TopicPartition*> assigned;
  RdKafka::ErrorCode err = consumer_->assignment(assigned);
  if (err == RdKafka::ERR_NO_ERROR && !assigned.empty()) {
    err = paused ? consumer_->pause(assigned) : consumer_->resume(assigned);
  }
  RdKafka::TopicPartition::destroy(assigned);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable(std::string(paused ? "pause" : "resume") + ": " +
                               RdKafka::err2str(err));
  }
  return Status::Ok();
}

std::string SourceConsumer::MemberId() const {
  char* member_id = rd_kafka_memberid(consumer_->c_ptr());
  if (member_id == nullptr) return std::string();
  std::string id(member_id);
  rd_kafka_mem_free(consumer_->c_ptr(), member_id);
  return id;
}

std::optional<int64_t> SourceConsumer::Lag(const TopicPartitionId& id) const {
  int64_t low = 0;
  int64_t high = 0;
  if (consumer_->get_watermark_offsets(id.topic, id.partition, &low, &high) !=
          RdKafka::ERR_NO_ERROR ||
      high < 0) {
    return std::nullopt;
  }
  const std::optional<int64_t> position = Position(id);
  if (!position) return std::nullopt;
  return std::max<int64_t>(0, high - *position);
}

std::optional<int64_t> SourceConsumer::Position(const TopicPartitionId& id) const {
  PartitionList list(1);
  list.Add(id);
  if (rd_kafka_position(consumer_->c_ptr(), list.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return std::nullopt;
  }
  const int64_t position = list.get()->elems[0].offset;
  if (position < 0) return std::nullopt;  // nothing returned yet
  return position;
}

Result<SourceConsumer::Watermarks> SourceConsumer::QueryWatermarks(const TopicPartitionId& id,
                                                                   int timeout_ms) const {
  Watermarks marks;
  const RdKafka::ErrorCode err = consumer_->query_watermark_offsets(
      id.topic, id.partition, &marks.low, &marks.high, timeout_ms);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("query the watermarks of " + id.ToString() + ": " +
                               RdKafka::err2str(err));
  }
  return marks;
}

std::string SourceConsumer::BrokersProblem() const {
  if (events_.all_brokers_down()) return "every broker connection is down";
  return commit_results_.last_failure();
}

void SourceConsumer::BrokersAnswered() { commit_results_.Succeeded(); }

Status SourceConsumer::ProbeBrokers(int timeout_ms) const {
  RdKafka::Metadata* raw = nullptr;
  const RdKafka::ErrorCode err = consumer_->metadata(false, nullptr, &raw, timeout_ms);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (err != RdKafka::ERR_NO_ERROR) {
    return Status::Unavailable("metadata request: " + RdKafka::err2str(err));
  }
  return Status::Ok();
}

Result<GroupMetadata> SourceConsumer::CurrentGroupMetadata() const {
  // librdkafka's background thread clears the member id when the group has dropped this member,
  // and the snapshot cannot be inspected: the same id before and after it means it holds that id
  // (a member joining again gets a new one).
  const std::string before = MemberId();
  GroupMetadata metadata(rd_kafka_consumer_group_metadata(consumer_->c_ptr()),
                         &rd_kafka_consumer_group_metadata_destroy);
  if (before.empty() || MemberId() != before) {
    return Status::Unavailable("not a member of the consumer group");
  }
  return metadata;
}

void SourceConsumer::Close() {
  if (closed_ || !consumer_) return;
  closed_ = true;
  consumer_->close();
}

Result<std::unique_ptr<KafkaWakeup>> SourceConsumer::MakeWakeup(boost::asio::io_context& io) {
  return KafkaWakeup::Create(io, rd_kafka_queue_get_consumer(consumer_->c_ptr()));
}

}  // namespace delaybridge::plugin
