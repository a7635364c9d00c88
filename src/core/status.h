// SPDX-License-Identifier: Apache-2.0
// Status and Result: errors as values, passed up the stack instead of thrown.
#ifndef PARITY_CORE_STATUS_H_
#define PARITY_CORE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace parity {

/// What went wrong, in the terms the exit code needs.
enum class StatusCode {
  kOk = 0,
  kInvalidInput,  ///< malformed or unreadable input, bad usage: exit 2
  kUnavailable,   ///< the requested backend, device or source can't run here: exit 3
  kInternal,      ///< a broken invariant inside parity
};

/// The outcome of an operation: ok, or a code with a message. The message names the file
/// (when there is one) and the problem, e.g. "a.npy: header length 900 past the end of the file".
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  /// Invalid input; when `path` is not empty the message reads "path: problem".
  static Status Invalid(std::string_view path, std::string_view problem);
  static Status Unavailable(std::string message) {
    return {StatusCode::kUnavailable, std::move(message)};
  }
  static Status Internal(std::string message) {
    return {StatusCode::kInternal, std::move(message)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns the same status with `context` prepended ("context: message").
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok());
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace parity

/// Returns the status from the enclosing function when `expr` is not ok.
#define PARITY_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::parity::Status parity_status_ = (expr);        \
    if (!parity_status_.ok()) return parity_status_; \
  } while (0)

#define PARITY_CONCAT_INNER_(a, b) a##b
#define PARITY_CONCAT_(a, b) PARITY_CONCAT_INNER_(a, b)

/// `PARITY_ASSIGN_OR_RETURN(auto x, F())` binds F()'s value to x, or returns its status.
#define PARITY_ASSIGN_OR_RETURN(lhs, expr) \
  PARITY_ASSIGN_OR_RETURN_IMPL_(PARITY_CONCAT_(parity_result_, __LINE__), lhs, expr)
#define PARITY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // PARITY_CORE_STATUS_H_
