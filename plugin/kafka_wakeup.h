// KafkaWakeup: wakes the Asio event loop when a librdkafka queue gets events, instead of
// polling on a timer. librdkafka calls an event callback (rd_kafka_queue_cb_event_enable) when
// the queue turns non-empty; the callback writes an eventfd, and an asio stream_descriptor waits
// for it. The owner drains the queue completely on every wake-up, because the next callback
// only comes after the queue was empty again.
//
// Quiet: while the owner's thread will wake up soon for another reason and poll the queue then
// (the Deliverer's due timer, which fires every millisecond or two under load), the callback
// writes nothing, so the thread is not woken a second time for the same events. Turning quiet
// off takes effect for the events that come after: the owner polls the queue after SetQuiet(false),
// since an event that came while quiet wakes nobody.
//
// Thread-safety: one owner thread (the io_context's) calls the methods. The callback runs on
// whichever thread enqueues an event (librdkafka's, or the owner's inside a librdkafka call),
// under the queue's lock; it reads the quiet flag, which is atomic, and writes the eventfd, which
// is what eventfds are for. A poll takes the same lock, which orders SetQuiet before it with
// the callbacks after it.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
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
  // See the class comment. Starts not quiet.
  void SetQuiet(bool quiet) { signal_.quiet.store(quiet, std::memory_order_relaxed); }

 private:
  // What librdkafka's callback reads: its opaque, so it must not move.
  struct Signal {
    int fd = -1;
    std::atomic<bool> quiet{false};
  };

  KafkaWakeup(boost::asio::io_context& io, rd_kafka_queue_t* queue, int fd);
  static void OnQueueEvent(rd_kafka_t* rk, void* opaque);

  rd_kafka_queue_t* queue_;
  Signal signal_;
  boost::asio::posix::stream_descriptor descriptor_;
  uint64_t counter_ = 0;  // eventfd read buffer
  std::shared_ptr<bool> alive_;
};

}  // namespace delaybridge::plugin
