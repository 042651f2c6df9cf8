// HttpServer on a loop thread of its own, spoken to over plain sockets: routes, replies given
// later, 404/405, HEAD, the query string, a port in use, a request too large, and
// ParseListenAddress.
#include "plugin/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>

#include "tests/support/http_get.h"

namespace delaybridge::plugin {
namespace {

using testing::HttpGet;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::map<std::string, HttpHandler> routes;
    routes["/now"] = [](HttpReply reply) { reply({200, "text/plain", "now\n"}); };
    routes["/later"] = [this](HttpReply reply) {
      auto timer = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::milliseconds(50));
      timer->async_wait([timer, reply](const boost::system::error_code&) {
        reply({503, "text/plain", "later\n"});
        reply({200, "text/plain", "a second reply is ignored\n"});
      });
    };
    auto server = HttpServer::Start(io_, ListenAddress{"127.0.0.1", 0}, std::move(routes));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    loop_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_.stop();
    if (loop_.joinable()) loop_.join();
    server_.reset();
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::unique_ptr<HttpServer> server_;
  std::thread loop_;
};

TEST_F(HttpServerTest, ServesRoutesAndRefusesTheRest) {
  ASSERT_NE(server_->port(), 0);
  auto now = HttpGet("127.0.0.1", server_->port(), "/now?format=text");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->status, 200);
  EXPECT_EQ(now->body, "now\n");
  EXPECT_NE(now->headers.find("Content-Type: text/plain"), std::string::npos) << now->headers;

  auto later = HttpGet("127.0.0.1", server_->port(), "/later");
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_EQ(later->status, 503);
  EXPECT_EQ(later->body, "later\n");

  auto missing = HttpGet("127.0.0.1", server_->port(), "/nowhere");
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ(missing->status, 404);

  auto post = HttpGet("127.0.0.1", server_->port(), "/now", std::chrono::seconds(10), "POST");
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->status, 405);
  EXPECT_NE(post->headers.find("Allow: GET, HEAD"), std::string::npos) << post->headers;

  auto head = HttpGet("127.0.0.1", server_->port(), "/now", std::chrono::seconds(10), "HEAD");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  EXPECT_NE(head->headers.find("Content-Length: 4"), std::string::npos) << head->headers;
}

TEST_F(HttpServerTest, APortInUseIsAnErrorNamingTheAddress) {
  auto second = HttpServer::Start(io_, ListenAddress{"127.0.0.1", server_->port()}, {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(
      second.status().message(),
      "cannot listen on 127.0.0.1:" + std::to_string(server_->port()) + ": Address already in use");
}

TEST_F(HttpServerTest, ARequestTooLargeIsDroppedAndTheServerGoesOn) {
  const auto start = std::chrono::steady_clock::now();
  auto huge = HttpGet("127.0.0.1", server_->port(), "/now?" + std::string(20'000, 'x'));
  EXPECT_FALSE(huge.ok() && huge->status == 200);
  // Dropped at once, not left to the 5 s request timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  auto now = HttpGet("127.0.0.1", server_->port(), "/now");
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->status, 200);
}

TEST(ListenAddressTest, ParsesHostAndPort) {
  auto v4 = ParseListenAddress("0.0.0.0:9464");
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(v4->host, "0.0.0.0");
  EXPECT_EQ(v4->port, 9464);
  auto local = ParseListenAddress("localhost:0");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ(local->ToString(), "127.0.0.1:0");
  auto v6 = ParseListenAddress("[::1]:9464");
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->ToString(), "[::1]:9464");
  for (const char* bad : {"9464", ":9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:9x",
                          "example.com:9464", "::1:9464", "[::1:9464", "127.0.0.1:-1"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseListenAddress("example.com:9464").status().message(),
            "\"example.com:9464\" does not name an IP address (IPv6 goes in brackets) "
            "(host:port or [v6 address]:port; port 0 picks a free one)");
}

}  // namespace
}  // namespace delaybridge::plugin
