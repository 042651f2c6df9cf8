#include "plugin/kafka_stats_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace delaybridge::plugin {
namespace {

constexpr int64_t kWarningIntervalMs = 60'000;

}  // namespace

KafkaStatsFile::KafkaStatsFile(std::string path, int fd, Logger& logger, const Clock& clock)
    : path_(std::move(path)), fd_(fd), warnings_(logger, clock, kWarningIntervalMs) {}

KafkaStatsFile::~KafkaStatsFile() { ::close(fd_); }

Result<std::unique_ptr<KafkaStatsFile>> KafkaStatsFile::Open(const std::string& path,
                                                             Logger& logger, const Clock& clock) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("open kafka_stats_file " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<KafkaStatsFile>(new KafkaStatsFile(path, fd, logger, clock));
}

void KafkaStatsFile::Append(std::string_view json) {
  std::string line;
  line.reserve(json.size() + 1);
  line.append(json).push_back('\n');
  std::lock_guard lock(mu_);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A full disk or a removed mount: drop this interval's statistics, keep delivering.
      warnings_.Warn("kafka statistics not written to " + path_ + ": " +
                     (n < 0 ? std::strerror(errno) : "short write"));
      return;
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace delaybridge::plugin
