#include "tools/load/load_run.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "tools/load/kafka_client.h"
#include "tools/load/load_producer.h"
#include "tools/load/passthrough_pipe.h"
#include "tools/load/target_consumer.h"

namespace delaybridge::load {

namespace {

constexpr int kMetadataTimeoutMs = 10'000;
constexpr int64_t kProgressIntervalMs = 5'000;
constexpr int64_t kWaitPollMs = 20;

int64_t EpochMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

double PerSecond(int64_t count, int64_t span_ms) {
  return span_ms > 0 ? static_cast<double>(count) * 1000.0 / static_cast<double>(span_ms) : 0;
}

// Everything one run keeps alive until its report is written.
struct Clients {
  std::unique_ptr<plugin::EmbeddedCluster> embedded;
  std::string bootstrap;
  KafkaHandle producer;
  KafkaHandle target_consumer;
  int32_t delay_partitions = 0;
  int32_t target_partitions = 0;
};

// Partition count of `topic`, retrying while a just-created topic is not yet in the metadata.
Result<int32_t> WaitForPartitions(rd_kafka_t* handle, const std::string& topic) {
  const int64_t start_ms = EpochMs();
  while (true) {
    Result<int32_t> partitions = PartitionCount(handle, topic, kMetadataTimeoutMs);
    if (partitions.ok() || partitions.status().code() != Status::Code::kNotFound ||
        EpochMs() - start_ms > kMetadataTimeoutMs) {
      return partitions;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status Connect(const LoadOptions& options, LoadProducer& load_producer, Clients& clients) {
  clients.bootstrap = options.bootstrap;
  if (options.bootstrap == "embedded") {
    Result<std::unique_ptr<plugin::EmbeddedCluster>> embedded = StartEmbeddedCluster(options);
    if (!embedded.ok()) return embedded.status();
    clients.embedded = std::move(embedded.value());
    clients.bootstrap = clients.embedded->bootstrap_servers();
  }
  Result<KafkaHandle> producer =
      NewProducer(clients.bootstrap, DefaultProducerProperties(), options.rdkafka_overrides,
                  &LoadProducer::OnDeliveryReport, &load_producer);
  if (!producer.ok()) return producer.status();
  clients.producer = std::move(producer.value());
  // --mode direct produces to the target: the delay topic plays no part.
  const bool uses_delay_topic = options.mode != LoadMode::kDirect;
  if (options.create_topics_partitions > 0) {
    const auto partitions = static_cast<int32_t>(options.create_topics_partitions);
    if (uses_delay_topic) {
      Status status = CreateTopic(clients.producer.get(), options.delay_topic, partitions, {},
                                  kMetadataTimeoutMs);
      if (!status.ok()) return status;
    }
    Status status = CreateTopic(clients.producer.get(), options.target_topic, partitions,
                                {{"message.timestamp.type", "LogAppendTime"}}, kMetadataTimeoutMs);
    for (const std::string& topic : options.extra_topics) {
      if (!status.ok()) break;
      status = CreateTopic(clients.producer.get(), topic, partitions, {}, kMetadataTimeoutMs);
    }
    if (!status.ok()) return status;
  }
  if (uses_delay_topic) {
    Result<int32_t> delay_partitions =
        WaitForPartitions(clients.producer.get(), options.delay_topic);
    if (!delay_partitions.ok()) return delay_partitions.status();
    clients.delay_partitions = *delay_partitions;
  }
  Result<int32_t> target_partitions =
      WaitForPartitions(clients.producer.get(), options.target_topic);
  if (!target_partitions.ok()) return target_partitions.status();
  clients.target_partitions = *target_partitions;
  return Status::Ok();
}

// Waits until `group` has committed offsets at or past the delay topic's current end.
Status WaitForGroup(const LoadOptions& options, const Clients& clients, LoadReport& report) {
  const int64_t start_ms = EpochMs();
  report.group_waited = true;
  Result<std::vector<int64_t>> ends = EndOffsets(clients.producer.get(), options.delay_topic,
                                                 clients.delay_partitions, kMetadataTimeoutMs);
  if (!ends.ok()) return ends.status();
  Result<KafkaHandle> observer =
      NewConsumer(clients.bootstrap, options.wait_group, DefaultConsumerProperties(),
                  options.rdkafka_overrides);
  if (!observer.ok()) return observer.status();
  while (EpochMs() - start_ms < options.timeout_ms) {
    Result<std::vector<int64_t>> committed = CommittedOffsets(
        observer->get(), options.delay_topic, clients.delay_partitions, kMetadataTimeoutMs);
    if (!committed.ok()) return committed.status();
    bool caught_up = true;
    for (int32_t partition = 0; partition < clients.delay_partitions; ++partition) {
      caught_up = caught_up && (*committed)[partition] >= (*ends)[partition];
    }
    if (caught_up) {
      report.group_caught_up = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  report.group_wait_ms = EpochMs() - start_ms;
  return Status::Ok();
}

// Sends the warm-up records and waits until they have all arrived.
Status Warmup(const LoadOptions& options, LoadProducer& load_producer, rd_kafka_t* producer,
              int flush_timeout_ms, const TargetConsumer& target) {
  const int64_t start_ms = EpochMs();
  Status status = load_producer.RunWarmup(producer, options.warmup, flush_timeout_ms);
  if (!status.ok()) return status;
  while (target.warmup_arrivals() < options.warmup) {
    if (EpochMs() - start_ms > options.timeout_ms) {
      const std::string hint =
          options.mode == LoadMode::kDirect
              ? "; can the tool produce to and consume from it?"
              : "; is something (DelayBridge, --mode passthrough) delivering from " +
                    options.delay_topic + "?";
      return Status::Unavailable("warm-up: " + std::to_string(target.warmup_arrivals()) + " of " +
                                 std::to_string(options.warmup) + " records (x-delay: 0) reached " +
                                 options.target_topic + " within " +
                                 std::to_string(options.timeout_ms) + " ms" + hint);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kWaitPollMs));
  }
  std::fprintf(stderr, "delaybridge-load: warm-up: %lld records arrived in %lld ms\n",
               static_cast<long long>(options.warmup),
               static_cast<long long>(EpochMs() - start_ms));
  return Status::Ok();
}

// Counts the acknowledged records that must have arrived by the end (lost) and those that
// may still come (pending).
void TallyMissing(const LoadOptions& options, const ProduceResult& produced,
                  const DeliveryTally& tally, int64_t stop_ms, LoadReport& report) {
  for (size_t id = 0; id < produced.acked_flag.size(); ++id) {
    if (!produced.acked_flag[id]) continue;
    if (id < tally.arrivals.size() && tally.arrivals[id] > 0) continue;
    if (produced.deliver_at_ms[id] <= stop_ms - options.lost_grace_ms) {
      ++report.lost;
    } else {
      ++report.pending;
    }
  }
}

std::string TimestampTypeName(const DeliveryTally& tally) {
  if (tally.log_append_time_records > 0 && tally.create_time_records > 0) return "mixed";
  if (tally.log_append_time_records > 0) return "LogAppendTime";
  if (tally.create_time_records > 0) return "CreateTime";
  return "none";
}

void FillDeliveryFields(const ProduceResult& produced, const DeliveryTally& tally,
                        LoadReport& report) {
  report.delivered = tally.delivered_unique;
  report.duplicates = tally.duplicates;
  report.foreign = tally.foreign;
  report.early = tally.early_records;
  report.early_by_consume_time = tally.consume_lateness.early_count();
  report.early_by_append_time = tally.early_by_append_time;
  report.broker_timestamp_type = TimestampTypeName(tally);
  report.first_delivery_ms = tally.first_delivery_ms;
  report.last_delivery_ms = tally.last_delivery_ms;
  report.consume_lateness = tally.consume_lateness;
  report.broker_lateness = tally.broker_lateness;
  if (!produced.deliver_at_ms.empty() && tally.delivered_unique > 0) {
    const int64_t earliest_due_ms =
        *std::min_element(produced.deliver_at_ms.begin(), produced.deliver_at_ms.end());
    report.delivery_rate_per_s =
        PerSecond(tally.delivered_unique, tally.last_delivery_ms - earliest_due_ms);
    report.delivery_window_rate_per_s =
        PerSecond(tally.delivered_unique, tally.last_delivery_ms - tally.first_delivery_ms);
  }
}

using LateRecordsFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Writes the list into file, opened before the run, and closes it.
Status WriteLateRecords(LateRecordsFile file, const std::string& path,
                        const std::vector<DeliveryTally::LateRecord>& late) {
  for (const DeliveryTally::LateRecord& r : late) {
    std::fprintf(file.get(), "%lld %lld\n", static_cast<long long>(r.deliver_at_ms),
                 static_cast<long long>(r.log_append_time_ms));
  }
  const bool failed = std::ferror(file.get()) != 0;
  if (std::fclose(file.release()) != 0 || failed) {
    return Status::IOError("--late-records " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<plugin::EmbeddedCluster>> StartEmbeddedCluster(const LoadOptions& options) {
  std::set<std::string> topics = {options.target_topic};
  if (options.mode != LoadMode::kDirect) topics.insert(options.delay_topic);
  Result<std::unique_ptr<plugin::EmbeddedCluster>> embedded =
      plugin::EmbeddedCluster::Start(topics, static_cast<int>(options.embedded_partitions));
  if (embedded.ok()) {
    std::fprintf(stderr, "delaybridge-load: embedded cluster bootstrap.servers=%s\n",
                 (*embedded)->bootstrap_servers().c_str());
  }
  return embedded;
}

Result<LoadReport> RunLoad(const LoadOptions& options) {
  const uint64_t run_id = std::random_device()() | (uint64_t{std::random_device()()} << 32);
  LoadReport report;
  report.mode = LoadModeName(options.mode);
  report.delay_spec = options.due_together_ms > 0
                          ? "due-together:" + std::to_string(options.due_together_ms) + "ms"
                          : options.delay.spec();
  report.header_style = HeaderStyleName(options.header_style);
  report.payload_bytes = options.payload_bytes;
  report.target_rate_per_s = options.rate_per_s;
  report.run_id = run_id;
  report.consumed = options.consume;
  // Opened before anything is produced: a path that cannot be written is a bad argument, told
  // at once rather than after the run whose records it was to list.
  LateRecordsFile late_file(nullptr, std::fclose);
  if (!options.late_records_file.empty()) {
    late_file.reset(std::fopen(options.late_records_file.c_str(), "w"));
    if (!late_file) {
      return Status::InvalidArgument("--late-records " + options.late_records_file + ": " +
                                     std::strerror(errno));
    }
  }

  LoadProducer load_producer(options, run_id);
  Clients clients;
  Status status = Connect(options, load_producer, clients);
  if (!status.ok()) return status;
  report.bootstrap = clients.bootstrap;

  // Positions are taken before the first record is produced, so nothing of this run is missed.
  const std::string group_prefix = "delaybridge-load-" + std::to_string(run_id);
  std::unique_ptr<TargetConsumer> target;
  if (options.consume) {
    Result<KafkaHandle> consumer = NewConsumerAtEnd(
        clients.producer.get(), clients.bootstrap, group_prefix, options.target_topic,
        clients.target_partitions, options.rdkafka_overrides, kMetadataTimeoutMs);
    if (!consumer.ok()) return consumer.status();
    clients.target_consumer = std::move(consumer.value());
    target = std::make_unique<TargetConsumer>(
        clients.target_consumer.get(), run_id, load_producer.attempted_counter(),
        options.late_records_file.empty() ? -1 : options.late_over_ms);
  }
  std::unique_ptr<PassthroughPipe> pipe;
  if (options.mode == LoadMode::kPassthrough) {
    Result<std::unique_ptr<PassthroughPipe>> connected =
        PassthroughPipe::Connect(clients.bootstrap, options.delay_topic, options.target_topic,
                                 group_prefix + "-pipe", options.rdkafka_overrides);
    if (!connected.ok()) return connected.status();
    pipe = std::move(connected.value());
  }

  std::atomic<bool> stop_consumer{false};
  std::atomic<bool> stop_pipe{false};
  std::atomic<int64_t> pipe_hold_until_ms{0};
  std::thread consumer_thread;
  if (target) consumer_thread = std::thread([&] { target->Run(stop_consumer); });
  Status pipe_status;
  std::thread pipe_thread;
  if (pipe)
    pipe_thread = std::thread([&] { pipe_status = pipe->Run(stop_pipe, pipe_hold_until_ms); });

  const auto flush_timeout_ms = static_cast<int>(std::max<int64_t>(options.timeout_ms, 10'000));
  if (target && options.warmup > 0) {
    status = Warmup(options, load_producer, clients.producer.get(), flush_timeout_ms, *target);
  }
  auto progress = [&] {
    std::fprintf(stderr, "delaybridge-load: sent %llu, delivered %lld\n",
                 static_cast<unsigned long long>(load_producer.records_attempted()),
                 static_cast<long long>(target ? target->delivered_unique() : 0));
  };
  Result<ProduceResult> produced = status;
  if (status.ok()) {
    report.due_at_ms = options.due_together_ms > 0 ? EpochMs() + options.due_together_ms : 0;
    pipe_hold_until_ms = report.due_at_ms;
    produced = load_producer.Run(clients.producer.get(), flush_timeout_ms, progress,
                                 kProgressIntervalMs, report.due_at_ms);
  }

  // Awaited: acknowledged records due before the waiting deadline.
  const int64_t wait_start_ms = EpochMs();
  const int64_t deadline_ms = wait_start_ms + options.timeout_ms;
  int64_t awaited = 0;
  if (produced.ok()) {
    for (size_t id = 0; id < produced->acked_flag.size(); ++id) {
      awaited += produced->acked_flag[id] && produced->deliver_at_ms[id] <= deadline_ms;
    }
    if (!options.wait_group.empty()) status = WaitForGroup(options, clients, report);
  }
  int64_t next_progress_ms = wait_start_ms + kProgressIntervalMs;
  while (produced.ok() && target && target->delivered_unique() < awaited &&
         EpochMs() < deadline_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kWaitPollMs));
    if (EpochMs() >= next_progress_ms) {
      progress();
      next_progress_ms += kProgressIntervalMs;
    }
  }
  const int64_t stop_ms = EpochMs();
  report.waited_ms = stop_ms - wait_start_ms;
  stop_pipe = true;
  if (pipe_thread.joinable()) pipe_thread.join();
  stop_consumer = true;
  if (consumer_thread.joinable()) consumer_thread.join();
  if (!produced.ok()) return produced.status();
  if (!status.ok()) return status;
  if (!pipe_status.ok()) return pipe_status;

  report.attempted = produced->attempted;
  report.produced = produced->acked;
  report.produce_failed = produced->failed;
  report.first_send_ms = produced->first_send_ms;
  report.last_send_ms = produced->last_send_ms;
  if (report.due_at_ms > 0 && report.last_send_ms >= report.due_at_ms) {
    std::fprintf(stderr,
                 "delaybridge-load: WARNING: producing ended after the shared due time; the "
                 "delivery rate includes producing. Give --due-together more time.\n");
  }
  report.produce_ack_latency = produced->ack_latency;
  report.produce_seconds =
      static_cast<double>(produced->flushed_ms - produced->first_send_ms) / 1000.0;
  report.produce_rate_per_s =
      PerSecond(produced->acked, produced->flushed_ms - produced->first_send_ms);
  if (target) {
    FillDeliveryFields(*produced, target->tally(), report);
    TallyMissing(options, *produced, target->tally(), stop_ms, report);
    if (late_file) {
      Status written = WriteLateRecords(std::move(late_file), options.late_records_file,
                                        target->tally().late_records);
      if (!written.ok()) return written;
    }
  }
  return report;
}

}  // namespace delaybridge::load
