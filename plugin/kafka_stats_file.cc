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
    : path_(std::move(path)),
      fd_(fd),
      warnings_(logger, clock, kWarningIntervalMs),
      writer_([this] { WriterLoop(); }) {}

KafkaStatsFile::~KafkaStatsFile() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_.notify_one();
  writer_.join();
  ::close(fd_);
}

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
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(line));
  }
  queued_.notify_one();
}

void KafkaStatsFile::WriterLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty() || dropped_ > 0; });
    if (dropped_ > 0) {
      const uint64_t dropped = std::exchange(dropped_, 0);
      lock.unlock();
      warnings_.Warn("kafka statistics: " + std::to_string(dropped) + " dropped, " +
                     std::to_string(kMaxQueued) + " already waiting for " + path_);
      lock.lock();
    }
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    std::string line = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    WriteLine(line);
    lock.lock();
  }
}

void KafkaStatsFile::WriteLine(const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // A full disk or a removed mount: drop this blob, keep going.
      warnings_.Warn("kafka statistics not written to " + path_ + ": " +
                     (n < 0 ? std::strerror(errno) : "short write"));
      return;
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace delaybridge::plugin
