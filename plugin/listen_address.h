// ListenAddress: where a server of the bridge listens, written "host:port" or
// "[v6 address]:port" in the configuration; the host is an IP address or "localhost", and port 0
// picks a free port.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace delaybridge::plugin {

struct ListenAddress {
  std::string host;  // an IPv4 or IPv6 address, brackets removed
  uint16_t port = 0;
  std::string ToString() const;
};

// "localhost" is read as 127.0.0.1.
Result<ListenAddress> ParseListenAddress(const std::string& text);

}  // namespace delaybridge::plugin
