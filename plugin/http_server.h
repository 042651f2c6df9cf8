// HttpServer: a small HTTP/1.1 server (Boost.Beast) on the bridge's event loop for /metrics,
// /healthz and /readyz. Each connection carries one GET or HEAD request and is closed after the
// response; a request larger than 8 KiB, or not complete within 5 s, is dropped. A handler runs
// on the loop thread and answers through its HttpReply, at once or later (a health check that
// asks another thread), at most once.
//
// Thread-safety: Start, port() and the handlers on the io_context's one thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "plugin/listen_address.h"

namespace delaybridge::plugin {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};
using HttpReply = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpReply)>;

class HttpServer {
 public:
  // Binds and starts accepting; routes maps a path ("/metrics") to its handler, and any other
  // path is a 404. An address that cannot be bound (in use, not local) is an error.
  static Result<std::unique_ptr<HttpServer>> Start(boost::asio::io_context& io,
                                                   const ListenAddress& address,
                                                   std::map<std::string, HttpHandler> routes);
  ~HttpServer();

  // The port bound (the one chosen when the address asked for port 0).
  uint16_t port() const { return port_; }

 private:
  HttpServer(boost::asio::io_context& io, std::map<std::string, HttpHandler> routes);
  void Accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;  // accepting again after an error
  // Shared with the connections, which may outlive the server by a response.
  std::shared_ptr<const std::map<std::string, HttpHandler>> routes_;
  uint16_t port_ = 0;
};

}  // namespace delaybridge::plugin
