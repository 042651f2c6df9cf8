// HttpGet: one HTTP/1.1 GET to a server on this machine, over a plain socket, for the tests of
// the bridge's /metrics, /healthz and /readyz (the client shares no code with the server).
//
// Thread-safety: plain function.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace delaybridge::testing {

struct HttpResult {
  int status = 0;
  std::string headers;  // the header lines, as received
  std::string body;
};

// GET path from host:port (an IPv4 address) with "Connection: close", waiting up to timeout
// for the whole response. method: "GET" or another verb, to see it refused.
Result<HttpResult> HttpGet(const std::string& host, uint16_t port, const std::string& path,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10),
                           const std::string& method = "GET");

}  // namespace delaybridge::testing
