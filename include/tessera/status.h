// Status and Result<T>: how every Tessera API reports bad input and bugs.
//
// A Status is either OK or an error with a code and a message. The message of
// an input error names the file, the line and the field at fault, e.g.
// "scenario.yaml:7: field 'rate_rps': must be a finite number >= 0, got 'NaN'".
// Expected planning outcomes (a service no configuration can serve) are NOT
// errors: they are part of a PlanResult. No Tessera API throws.
//
// Thread-safety: values; safe to copy and to read from several threads.
#ifndef TESSERA_STATUS_H_
#define TESSERA_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // malformed or out-of-range input (CLI exit code 2)
  kNotFound,         // a named file, model, GPU or planner does not exist (exit 2)
  kIoError,          // the file system refused a read or a write (exit 2)
  kInternal,         // a bug: an invariant does not hold (exit 1)
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }
  static Status NotFound(std::string message) {
    return Status(StatusCode::kNotFound, std::move(message));
  }
  static Status IoError(std::string message) {
    return Status(StatusCode::kIoError, std::move(message));
  }
  static Status Internal(std::string message) {
    return Status(StatusCode::kInternal, std::move(message));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", or "<code name>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value of type T, or the Status that explains why there is none.
// REQUIRES: a Result is never built from an OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "a Result without a value needs an error Status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tessera

// Propagates an error Status from an expression returning Status.
#define TESSERA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::tessera::Status tessera_status_ = (expr);        \
    if (!tessera_status_.ok()) return tessera_status_; \
  } while (false)

#define TESSERA_CONCAT_INNER_(a, b) a##b
#define TESSERA_CONCAT_(a, b) TESSERA_CONCAT_INNER_(a, b)

// Evaluates a Result<T> expression; on error returns its Status, otherwise
// moves the value into `lhs` (which may be a declaration such as `auto x`).
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr)                     \
  auto TESSERA_CONCAT_(tessera_result_, __LINE__) = (expr);     \
  if (!TESSERA_CONCAT_(tessera_result_, __LINE__).ok())         \
    return TESSERA_CONCAT_(tessera_result_, __LINE__).status(); \
  lhs = std::move(TESSERA_CONCAT_(tessera_result_, __LINE__)).value()

#endif  // TESSERA_STATUS_H_
