#include "tests/support/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace delaybridge::testing {

namespace {

Status Errno(const std::string& what) {
  return Status::IOError(what + ": " + std::strerror(errno));
}

// Reads until the peer closes the connection or the deadline passes.
Result<std::string> ReadAll(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string received;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::Unavailable("no complete response in time");
    pollfd readable{fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Errno("poll");
    if (ready == 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("read");
    if (n == 0) return received;
    received.append(buffer, static_cast<size_t>(n));
  }
}

Result<HttpResult> Parse(const std::string& response) {
  const size_t end_of_headers = response.find("\r\n\r\n");
  if (!response.starts_with("HTTP/1.1 ") || end_of_headers == std::string::npos) {
    return Status::Corruption("not an HTTP/1.1 response: " + response.substr(0, 200));
  }
  HttpResult result;
  result.status = std::atoi(response.c_str() + 9);
  result.headers = response.substr(0, end_of_headers);
  result.body = response.substr(end_of_headers + 4);
  return result;
}

}  // namespace

Result<HttpResult> HttpGet(const std::string& host, uint16_t port, const std::string& path,
                           std::chrono::milliseconds timeout, const std::string& method) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    return Status::InvalidArgument("not an IPv4 address: " + host);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  const auto close_fd = [fd](Result<HttpResult> result) {
    ::close(fd);
    return result;
  };
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return close_fd(Errno("connect to " + host + ":" + std::to_string(port)));
  }
  const std::string request =
      method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return close_fd(Errno("send"));
  }
  auto response = ReadAll(fd, deadline);
  if (!response.ok()) return close_fd(response.status());
  return close_fd(Parse(*response));
}

}  // namespace delaybridge::testing
