#include "plugin/kafka_wakeup.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <cerrno>
#include <cstring>

namespace delaybridge::plugin {

Result<std::unique_ptr<KafkaWakeup>> KafkaWakeup::Create(boost::asio::io_context& io,
                                                         rd_kafka_queue_t* queue) {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    rd_kafka_queue_destroy(queue);
    return Status::IOError(std::string("eventfd for a librdkafka queue: ") + std::strerror(errno));
  }
  return std::unique_ptr<KafkaWakeup>(new KafkaWakeup(io, queue, fd));
}

KafkaWakeup::KafkaWakeup(boost::asio::io_context& io, rd_kafka_queue_t* queue, int fd)
    : queue_(queue), descriptor_(io, fd), alive_(std::make_shared<bool>(true)) {
  signal_.fd = fd;
  rd_kafka_queue_cb_event_enable(queue_, &KafkaWakeup::OnQueueEvent, &signal_);
}

KafkaWakeup::~KafkaWakeup() {
  *alive_ = false;
  // Under the queue's lock: once it returns, no callback runs or will run with signal_.
  rd_kafka_queue_cb_event_enable(queue_, nullptr, nullptr);
  rd_kafka_queue_destroy(queue_);
  boost::system::error_code ignored;
  descriptor_.close(ignored);
}

void KafkaWakeup::OnQueueEvent(rd_kafka_t*, void* opaque) {
  const auto* signal = static_cast<const Signal*>(opaque);
  if (signal->quiet.load(std::memory_order_relaxed)) return;
  // An eventfd write needs exactly 8 bytes. It fails only when the counter would overflow,
  // which a reader that drains on every wake-up never lets happen.
  const uint64_t one = 1;
  (void)!::write(signal->fd, &one, sizeof(one));
}

void KafkaWakeup::Arm(std::function<void()> on_wake) {
  descriptor_.async_read_some(
      boost::asio::buffer(&counter_, sizeof(counter_)),
      [alive = alive_, on_wake = std::move(on_wake)](const boost::system::error_code& ec, size_t) {
        if (!*alive || ec == boost::asio::error::operation_aborted) return;
        on_wake();
      });
}

}  // namespace delaybridge::plugin
