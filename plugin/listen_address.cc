#include "plugin/listen_address.h"

#include <arpa/inet.h>

#include <charconv>

namespace delaybridge::plugin {

std::string ListenAddress::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  const auto invalid = [&text](const std::string& why) {
    return Status::InvalidArgument("\"" + text + "\" " + why +
                                   " (host:port or [v6 address]:port; port 0 picks a free one)");
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return invalid("is not an address and a port");
  std::string host = text.substr(0, colon);
  const bool bracketed = host.front() == '[';
  if (bracketed) {
    if (host.size() < 3 || host.back() != ']') return invalid("has an unclosed [");
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  const char* first = port_text.data();
  const char* last = first + port_text.size();
  const auto [end, ec] = std::from_chars(first, last, port);
  if (port_text.empty() || ec != std::errc() || end != last || port > 65535) {
    return invalid("has no port from 0 to 65535");
  }
  if (host == "localhost") host = "127.0.0.1";
  unsigned char bytes[16];
  const bool v4 = !bracketed && ::inet_pton(AF_INET, host.c_str(), bytes) == 1;
  const bool v6 = bracketed && ::inet_pton(AF_INET6, host.c_str(), bytes) == 1;
  if (!v4 && !v6) return invalid("does not name an IP address (IPv6 goes in brackets)");
  return ListenAddress{host, static_cast<uint16_t>(port)};
}

}  // namespace delaybridge::plugin
