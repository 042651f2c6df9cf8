// KafkaStatsFile: each statistics blob becomes one line, appended to what is there; a file
// that cannot be opened is an error naming it; a failing write (a full disk) is logged and
// dropped; a writer stuck on a stalled file drops what does not fit its queue and never blocks
// the caller.
#include "plugin/kafka_stats_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/plugin/log_capture.h"
#include "tests/support/read_file.h"
#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(KafkaStatsFileTest, AppendsOneLinePerBlob) {
  testing::TempDir dir("kafka-stats");
  const std::string path = dir.File("stats.jsonl");
  {
    std::ofstream earlier(path);
    earlier << "{\"earlier\": 1}\n";
  }
  Logger logger(LogLevel::kInfo);
  ManualClock clock(1'000);
  {
    auto stats = KafkaStatsFile::Open(path, logger, clock);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    (*stats)->Append(R"({"type": "producer", "msg_cnt": 3})");
    (*stats)->Append(R"({"type": "consumer"})");
  }  // the destructor writes what is queued
  EXPECT_EQ(testing::ReadFile(path),
            "{\"earlier\": 1}\n{\"type\": \"producer\", \"msg_cnt\": 3}\n{\"type\": "
            "\"consumer\"}\n");
}

TEST(KafkaStatsFileTest, UnopenablePathIsAnErrorNamingIt) {
  Logger logger(LogLevel::kInfo);
  ManualClock clock(1'000);
  auto stats = KafkaStatsFile::Open("/nonexistent-dir/stats.jsonl", logger, clock);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), Status::Code::kIOError);
  EXPECT_NE(stats.status().message().find("/nonexistent-dir/stats.jsonl"), std::string::npos)
      << stats.status().message();
}

// /dev/full fails every write with ENOSPC, as a full disk does.
TEST(KafkaStatsFileTest, FullDiskIsWarnedOnceAMinuteAndDropped) {
  LogCapture log("kafka-stats-full");
  ManualClock clock(1'000'000);
  {
    auto stats = KafkaStatsFile::Open("/dev/full", log.logger(), clock);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    (*stats)->Append("{}");
    (*stats)->Append("{}");  // within the minute: counted, not logged
  }
  const std::string text = log.Text();
  EXPECT_EQ(Count(text, "kafka statistics not written to /dev/full: No space left on device"), 1u)
      << text;
}

// A FIFO nobody reads stands for a disk that stopped: the writer blocks once the pipe is full,
// the queue fills, and further blobs are dropped while Append returns at once.
TEST(KafkaStatsFileTest, StalledFileDropsWhatDoesNotFitAndNeverBlocksTheCaller) {
  LogCapture log("kafka-stats-stall");
  const std::string fifo = log.dir().File("stats.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ManualClock clock(1'000'000);

  constexpr size_t kBlobs = 400;
  const std::string blob(4096, 'x');  // 16 fill a 64 KiB pipe
  size_t lines = 0;
  {
    auto stats = KafkaStatsFile::Open(fifo, log.logger(), clock);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    for (size_t i = 0; i < kBlobs; ++i) (*stats)->Append(blob);  // must not block

    // Now drain the pipe until the writer closes it (the destructor below).
    ASSERT_EQ(::fcntl(reader, F_SETFL, 0), 0);
    std::thread drain([reader, &lines] {
      char buffer[65536];
      ssize_t n;
      while ((n = ::read(reader, buffer, sizeof buffer)) > 0) {
        for (ssize_t i = 0; i < n; ++i) lines += buffer[i] == '\n';
      }
    });
    stats->reset();
    drain.join();
  }
  ::close(reader);

  EXPECT_LT(lines, kBlobs);
  EXPECT_GE(lines, KafkaStatsFile::kMaxQueued);
  const std::string text = log.Text();
  EXPECT_EQ(Count(text, " dropped, 128 already waiting for " + fifo), 1u) << text;
}

}  // namespace
}  // namespace delaybridge::plugin
