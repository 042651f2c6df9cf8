#include "core/status.h"

namespace delaybridge {

namespace {
const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "Invalid argument";
    case Status::Code::kNotFound:
      return "Not found";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kIOError:
      return "IO error";
    case Status::Code::kUnavailable:
      return "Unavailable";
    case Status::Code::kFailedPrecondition:
      return "Failed precondition";
  }
  return "Unknown";
}
}  // namespace

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace delaybridge
