// What the consuming thread pays per record to take it from librdkafka, one message per call (as
// SourceConsumer::Poll does) against a batch per call (as the pass-through pipe of
// scripts/bench-e2e.sh does). The bridge takes one at a time because librdkafka before 2.1.0 can
// skip offsets in its batch calls when a partition is paused or resumed (confluentinc/librdkafka
// #4208), and the bridge pauses partitions for backpressure.
// Each iteration reads kRecords records of 100 bytes with one header from partition 0 of a topic
// on librdkafka's in-process mock cluster, with a fresh consumer assigned at the beginning. Google
// Benchmark's CPU column is the consuming thread's CPU time per iteration; its Time column is
// mostly the wait for the first fetch. Fetching runs on librdkafka's own threads in both cases.
#include <benchmark/benchmark.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace delaybridge::plugin {
namespace {

// About 2.3 MB: the mock trims a partition's oldest records beyond a few MB, and a read of
// records it trimmed would never complete.
constexpr int kRecords = 20'000;
constexpr size_t kBatch = 4096;  // the pipe's (tools/load/passthrough_pipe.cc)
// A read that has not got every record by then fails instead of waiting forever.
constexpr auto kReadTimeout = std::chrono::seconds(30);
constexpr char kTopic[] = "consume-bench";

using Handle = std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)>;
using Cluster = std::unique_ptr<rd_kafka_mock_cluster_t, decltype(&rd_kafka_mock_cluster_destroy)>;

// A client of the given type, or nothing (with the reason in error).
Handle NewClient(rd_kafka_type_t type, const std::string& bootstrap, std::string& error) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char reason[512];
  const std::array<std::pair<const char*, std::string>, 2> settings = {
      {{"bootstrap.servers", bootstrap}, {"group.id", "consume-bench"}}};
  for (const auto& [key, value] : settings) {
    if (type == RD_KAFKA_PRODUCER && std::string(key) != "bootstrap.servers") continue;
    if (rd_kafka_conf_set(conf, key, value.c_str(), reason, sizeof reason) != RD_KAFKA_CONF_OK) {
      error = reason;
      rd_kafka_conf_destroy(conf);
      return Handle(nullptr, &rd_kafka_destroy);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, reason, sizeof reason);
  if (!rk) {
    error = reason;
    rd_kafka_conf_destroy(conf);  // rd_kafka_new takes it only when it succeeds
  }
  return Handle(rk, &rd_kafka_destroy);
}

// The mock cluster with kRecords records in kTopic, and the producer that owns it.
struct FilledCluster {
  Handle owner{nullptr, &rd_kafka_destroy};
  Cluster cluster{nullptr, &rd_kafka_mock_cluster_destroy};
  std::string bootstrap;
  std::string error;
};

FilledCluster Fill() {
  FilledCluster f;
  f.owner = NewClient(RD_KAFKA_PRODUCER, "", f.error);
  if (!f.owner) return f;
  f.cluster.reset(rd_kafka_mock_cluster_new(f.owner.get(), 1));
  if (!f.cluster) {
    f.error = "rd_kafka_mock_cluster_new failed";
    return f;
  }
  f.bootstrap = rd_kafka_mock_cluster_bootstraps(f.cluster.get());
  if (rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(f.cluster.get(), kTopic, 1, 1)) {
    f.error = rd_kafka_err2str(err);
    return f;
  }
  Handle producer = NewClient(RD_KAFKA_PRODUCER, f.bootstrap, f.error);
  if (!producer) return f;
  const std::string value(100, 'v');
  for (int i = 0; i < kRecords; ++i) {
    const std::string key = "key-" + std::to_string(i);
    rd_kafka_resp_err_t err;
    while ((err = rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(kTopic),
                                    RD_KAFKA_V_PARTITION(0), RD_KAFKA_V_KEY(key.data(), key.size()),
                                    RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                    RD_KAFKA_V_HEADER("x-delay", "5000", 4),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) ==
           RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer.get(), 10);
    }
    if (err) {
      f.error = rd_kafka_err2str(err);
      return f;
    }
  }
  if (rd_kafka_flush(producer.get(), 60'000)) f.error = "flush timed out";
  return f;
}

// A consumer assigned partition 0 of kTopic from its beginning.
Handle AssignedConsumer(const std::string& bootstrap, std::string& error) {
  Handle consumer = NewClient(RD_KAFKA_CONSUMER, bootstrap, error);
  if (!consumer) return consumer;
  rd_kafka_poll_set_consumer(consumer.get());
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, kTopic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  if (rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), list))
    error = rd_kafka_err2str(err);
  rd_kafka_topic_partition_list_destroy(list);
  return consumer;
}

// Runs read(consumer) once per iteration; read returns the records it took, or -1.
template <typename Read>
void ConsumeAll(benchmark::State& state, Read read) {
  const FilledCluster filled = Fill();
  if (!filled.error.empty()) return state.SkipWithError(filled.error.c_str());
  for (auto _ : state) {
    state.PauseTiming();
    std::string error;
    Handle consumer = AssignedConsumer(filled.bootstrap, error);
    if (!error.empty()) return state.SkipWithError(error.c_str());
    state.ResumeTiming();
    if (read(consumer.get()) != kRecords) return state.SkipWithError("records missing or late");
    state.PauseTiming();
    rd_kafka_consumer_close(consumer.get());
    consumer.reset();
    state.ResumeTiming();
  }
}

void BM_ConsumeOneMessagePerCall(benchmark::State& state) {
  ConsumeAll(state, [](rd_kafka_t* consumer) {
    const auto deadline = std::chrono::steady_clock::now() + kReadTimeout;
    int records = 0;
    while (records < kRecords) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
      if (!m) continue;
      if (!m->err) ++records;
      rd_kafka_message_destroy(m);
    }
    return records;
  });
}
BENCHMARK(BM_ConsumeOneMessagePerCall)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ConsumeBatchPerCall(benchmark::State& state) {
  ConsumeAll(state, [](rd_kafka_t* consumer) {
    const std::unique_ptr<rd_kafka_queue_t, decltype(&rd_kafka_queue_destroy)> queue(
        rd_kafka_queue_get_consumer(consumer), &rd_kafka_queue_destroy);
    const auto deadline = std::chrono::steady_clock::now() + kReadTimeout;
    std::array<rd_kafka_message_t*, kBatch> batch;
    int records = 0;
    while (records < kRecords) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      const ssize_t n = rd_kafka_consume_batch_queue(queue.get(), 100, batch.data(), batch.size());
      if (n < 0) return -1;
      for (ssize_t i = 0; i < n; ++i) {
        if (!batch[i]->err) ++records;
        rd_kafka_message_destroy(batch[i]);
      }
    }
    return records;
  });
}
BENCHMARK(BM_ConsumeBatchPerCall)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace delaybridge::plugin
