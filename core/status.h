// Status and Result<T>: errors as values with a message that carries context.
//
// Nothing in DelayBridge throws across a module boundary; functions that can fail return a
// Status (or a Result<T> holding either a value or a Status). Messages are written for
// operators: they say what was being done and on which file/topic/key, e.g.
// "open index 2026-11-22T16.idx: Permission denied".
//
// Thread-safety: plain values; safe to copy between threads.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace delaybridge {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,     // the caller's input is wrong (bad config, bad header)
    kNotFound,            // a file, topic or record does not exist
    kCorruption,          // on-disk data failed a check (checksum, length, magic)
    kIOError,             // the operating system refused (disk full, permission)
    kUnavailable,         // a remote party (the broker) cannot be reached right now
    kFailedPrecondition,  // the operation is not valid in the current state
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status FailedPrecondition(std::string msg) {
    return {Code::kFailedPrecondition, std::move(msg)};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "context: message", to add what the caller was doing.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

  std::string ToString() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// Either a T or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design, like StatusOr
  Result(Status status) : value_(std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(value_);
  }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace delaybridge
