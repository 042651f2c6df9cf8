// KafkaStatsFile: each statistics blob becomes one line, appended to what is there; a file
// that cannot be opened is an error naming it; a failing write (a full disk) is logged and
// dropped, never fatal.
#include "plugin/kafka_stats_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace delaybridge::plugin {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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
  auto stats = KafkaStatsFile::Open(path, logger, clock);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  (*stats)->Append(R"({"type": "producer", "msg_cnt": 3})");
  (*stats)->Append(R"({"type": "consumer"})");
  EXPECT_EQ(
      ReadAll(path),
      "{\"earlier\": 1}\n{\"type\": \"producer\", \"msg_cnt\": 3}\n{\"type\": \"consumer\"}\n");
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
  testing::TempDir dir("kafka-stats-full");
  const std::string log_path = dir.File("log");
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(log_fd, 0);
  Logger logger(LogLevel::kInfo, log_fd);
  ManualClock clock(1'000'000);
  auto stats = KafkaStatsFile::Open("/dev/full", logger, clock);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  (*stats)->Append("{}");
  clock.advance_ms(1'000);
  (*stats)->Append("{}");  // within the minute: suppressed
  ::close(log_fd);

  const std::string log = ReadAll(log_path);
  EXPECT_NE(log.find("kafka statistics not written to /dev/full: No space left on device"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("suppressed"), std::string::npos) << log;
  EXPECT_EQ(log.find("kafka statistics", log.find("kafka statistics") + 1), std::string::npos)
      << log;
}

}  // namespace
}  // namespace delaybridge::plugin
