// Status and Result<T>: errors as values at component boundaries.
// A Status is either ok or carries a code and a message naming what failed.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace aura {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is malformed or out of bounds
  kNotFound,            // the thing named does not exist
  kCorruption,          // stored bytes fail a check
  kIo,                  // the OS or storage failed
  kBusy,                // another process holds the resource
  kFailedPrecondition,  // the object is in a state that refuses the call
  kUnavailable,         // a feature is missing on this machine
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalid(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
  static Status not_found(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
  static Status corruption(std::string m) { return {ErrorCode::kCorruption, std::move(m)}; }
  static Status io(std::string m) { return {ErrorCode::kIo, std::move(m)}; }
  static Status busy(std::string m) { return {ErrorCode::kBusy, std::move(m)}; }
  static Status failed_precondition(std::string m) {
    return {ErrorCode::kFailedPrecondition, std::move(m)};
  }
  static Status unavailable(std::string m) { return {ErrorCode::kUnavailable, std::move(m)}; }

  bool is_ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns this status with "context: " prefixed to its message (ok stays ok); what it
  // expected is kept.
  Status with_context(std::string_view context) const {
    if (is_ok()) return *this;
    Status s{code_, std::string(context) + ": " + message_};
    s.expected_ = expected_;
    return s;
  }
  // The valid names, when the error is an unknown one (the message lists them too): for front
  // ends that show them as choices (the API's `expected`).
  Status with_expected(std::vector<std::string> names) const {
    Status s = *this;
    if (!is_ok()) s.expected_ = std::move(names);
    return s;
  }
  const std::vector<std::string>& expected() const { return expected_; }
  // Another message for the same error, keeping its code and what it expected.
  Status with_message(std::string message) const {
    Status s = *this;
    s.message_ = std::move(message);
    return s;
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::vector<std::string> expected_;
};

// Either a T or a non-ok Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {  // NOLINT
    assert(!std::get<Status>(v_).is_ok());
  }

  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

  Status status() const { return ok() ? Status::ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace aura

// Returns early with the status of `expr` when it is not ok.
#define AURA_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::aura::Status aura_status_ = (expr);           \
    if (!aura_status_.is_ok()) return aura_status_; \
  } while (0)

// `lhs = value of expr` (a Result), or returns early with its status.
#define AURA_ASSIGN_OR_RETURN(lhs, expr)                  \
  do {                                                    \
    auto aura_result_ = (expr);                           \
    if (!aura_result_.ok()) return aura_result_.status(); \
    lhs = std::move(aura_result_).value();                \
  } while (0)
