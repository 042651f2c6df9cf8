#include "plugin/http_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>

namespace delaybridge::plugin {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::chrono::seconds kRequestTimeout{5};
constexpr size_t kMaxRequestBytes = 8 * 1024;
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// One connection: reads a request, answers it through the route's handler, closes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<const std::map<std::string, HttpHandler>> routes)
      : stream_(std::move(socket)), routes_(std::move(routes)) {}

  void Read() {
    parser_.header_limit(kMaxRequestBytes);
    parser_.body_limit(kMaxRequestBytes);
    stream_.expires_after(kRequestTimeout);
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Dispatch();  // else: dropped, and the socket closes
                     });
  }

 private:
  void Dispatch() {
    const auto& request = parser_.get();
    keep_head_only_ = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !keep_head_only_) {
      return Respond({405, "text/plain; charset=utf-8", "only GET and HEAD\n"});
    }
    std::string path(request.target());
    if (auto query = path.find('?'); query != std::string::npos) path.resize(query);
    auto route = routes_->find(path);
    if (route == routes_->end()) return Respond({404, "text/plain; charset=utf-8", "not found\n"});
    // The reply may come later, from another handler; the connection waits for it.
    route->second(
        [self = shared_from_this()](HttpResponse response) { self->Respond(std::move(response)); });
  }

  void Respond(HttpResponse response) {
    if (responded_) return;
    responded_ = true;
    response_.result(static_cast<unsigned>(response.status));
    response_.version(11);
    response_.set(http::field::content_type, response.content_type);
    response_.set(http::field::connection, "close");
    if (response.status == 405) response_.set(http::field::allow, "GET, HEAD");
    response_.keep_alive(false);
    const size_t length = response.body.size();
    if (!keep_head_only_) response_.body() = std::move(response.body);
    response_.content_length(length);
    stream_.expires_after(kRequestTimeout);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<const std::map<std::string, HttpHandler>> routes_;
  beast::flat_buffer buffer_{kMaxRequestBytes};
  http::request_parser<http::empty_body> parser_;
  http::response<http::string_body> response_;
  bool keep_head_only_ = false;
  bool responded_ = false;
};

}  // namespace

HttpServer::HttpServer(asio::io_context& io, std::map<std::string, HttpHandler> routes)
    : acceptor_(io),
      retry_timer_(io),
      routes_(std::make_shared<const std::map<std::string, HttpHandler>>(std::move(routes))) {}

HttpServer::~HttpServer() {
  beast::error_code ignored;
  acceptor_.close(ignored);
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(asio::io_context& io,
                                                      const ListenAddress& address,
                                                      std::map<std::string, HttpHandler> routes) {
  std::unique_ptr<HttpServer> server(new HttpServer(io, std::move(routes)));
  beast::error_code ec;
  const auto ip = asio::ip::make_address(address.host, ec);
  const tcp::endpoint endpoint(ip, address.port);
  if (!ec) server->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) server->acceptor_.bind(endpoint, ec);
  if (!ec) server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + address.ToString() + ": " + ec.message());
  }
  server->port_ = server->acceptor_.local_endpoint().port();
  server->Accept();
  return server;
}

void HttpServer::Accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;  // the server is closing
    if (!ec) {
      std::make_shared<Connection>(std::move(socket), routes_)->Read();
      return Accept();
    }
    // Out of descriptors, most likely: accepting again at once would spin the loop.
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([this](beast::error_code wait) {
      if (!wait) Accept();
    });
  });
}

}  // namespace delaybridge::plugin
