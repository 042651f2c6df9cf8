// KafkaWakeup on a producer's main queue, against librdkafka's mock cluster: a delivery report
// wakes the io_context; quiet, the report waits in the queue and wakes nothing; after
// SetQuiet(false) and a poll, the next report wakes it again.
#include "plugin/kafka_wakeup.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <boost/asio/executor_work_guard.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "tests/support/test_cluster.h"

namespace delaybridge::plugin {
namespace {

using testing::TestCluster;

constexpr char kTopic[] = "wakeup.target";

class KafkaWakeupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = TestCluster::Create();
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->CreateTopic(kTopic, 1).ok());
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char errstr[512];
    ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", cluster_->bootstrap().c_str(), errstr,
                                sizeof(errstr)),
              RD_KAFKA_CONF_OK)
        << errstr;
    ASSERT_EQ(rd_kafka_conf_set(conf, "linger.ms", "0", errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
    // Reports go to the main queue only when someone asks for them.
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t*, void*) {});
    producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    ASSERT_NE(producer_, nullptr) << errstr;
    main_queue_ = rd_kafka_queue_get_main(producer_);
    auto wakeup = KafkaWakeup::Create(io_, rd_kafka_queue_get_main(producer_));
    ASSERT_TRUE(wakeup.ok()) << wakeup.status().ToString();
    wakeup_ = std::move(wakeup).value();
  }

  void TearDown() override {
    wakeup_.reset();
    if (main_queue_) rd_kafka_queue_destroy(main_queue_);
    if (producer_) {
      rd_kafka_flush(producer_, 5000);
      rd_kafka_destroy(producer_);
    }
  }

  void Produce(const std::string& value) {
    ASSERT_EQ(rd_kafka_producev(producer_, RD_KAFKA_V_TOPIC(kTopic),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }

  // Waits (up to 10 s) until the main queue holds a report: the event callback has run by then,
  // since the queue's length is read under the lock it runs under.
  bool AwaitReportQueued() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rd_kafka_queue_length(main_queue_) == 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  std::unique_ptr<TestCluster> cluster_;
  boost::asio::io_context io_;
  // Keeps io_ from stopping when it runs out of handlers, so every poll and run below looks.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  rd_kafka_t* producer_ = nullptr;
  rd_kafka_queue_t* main_queue_ = nullptr;
  std::unique_ptr<KafkaWakeup> wakeup_;
};

TEST_F(KafkaWakeupTest, AReportWakesTheLoopUnlessQuiet) {
  int wakes = 0;
  wakeup_->Arm([&] { ++wakes; });
  Produce("first");
  ASSERT_EQ(io_.run_one_for(std::chrono::seconds(10)), 1u) << "no wake-up for a report";
  EXPECT_EQ(wakes, 1);
  while (rd_kafka_poll(producer_, 0) > 0) {
  }

  wakeup_->Arm([&] { ++wakes; });
  wakeup_->SetQuiet(true);
  Produce("second");
  ASSERT_TRUE(AwaitReportQueued());
  io_.poll();
  EXPECT_EQ(wakes, 1) << "woken while quiet";

  wakeup_->SetQuiet(false);
  while (rd_kafka_poll(producer_, 0) > 0) {
  }
  Produce("third");
  ASSERT_EQ(io_.run_one_for(std::chrono::seconds(10)), 1u) << "no wake-up after SetQuiet(false)";
  EXPECT_EQ(wakes, 2);
}

}  // namespace
}  // namespace delaybridge::plugin
