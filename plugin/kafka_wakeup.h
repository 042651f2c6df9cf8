// KafkaWakeup: wakes the Asio event loop when a librdkafka queue gets events, instead of
// polling on a timer. librdkafka writes to an eventfd when the queue turns non-empty
// (rd_kafka_queue_io_event_enable); an asio stream_descriptor waits for it. The owner drains
// the queue completely on every wake-up, because the next write only comes after the queue
// was empty again.
//
// Thread-safety: one owner thread (the io_context's). librdkafka writes the eventfd from its
// own threads, which is what eventfds are for.
#pragma once

#include <librdkafka/rdkafka.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>

#include "core/status.h"

namespace delaybridge::plugin {

class KafkaWakeup {
 public:
  // Takes ownership of queue (a reference from rd_kafka_queue_get_*()).
  static Result<std::unique_ptr<KafkaWakeup>> Create(boost::asio::io_context& io,
                                                     rd_kafka_queue_t* queue);
  ~KafkaWakeup();
  KafkaWakeup(const KafkaWakeup&) = delete;
  KafkaWakeup& operator=(const KafkaWakeup&) = delete;

  // Calls on_wake (once) on the io_context thread after the queue got events. Re-arm from
  // on_wake after draining the queue.
  void Arm(std::function<void()> on_wake);

 private:
  KafkaWakeup(boost::asio::io_context& io, rd_kafka_queue_t* queue, int fd);

  rd_kafka_queue_t* queue_;
  boost::asio::posix::stream_descriptor descriptor_;
  uint64_t counter_ = 0;  // eventfd read buffer
  std::shared_ptr<bool> alive_;
};

}  // namespace delaybridge::plugin
