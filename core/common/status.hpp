// Status values returned by the core, transports and backends.
//
// Contract (after RocksDB's Status and TigerBeetle's error discipline):
// - A Status is a value; functions that can fail return it [[nodiscard]].
// - `again` is the distinct back-pressure code: the caller may retry later
//   (a queue is full, a window is closed). Every other non-ok code is final
//   for the operation that returned it.
// - Codes exist only where a caller reacts differently to them.
// - The message says what failed and where (a target, a path, a field); the
//   first place that detects an error fills it in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

enum class StatusCode : std::uint8_t {
  ok = 0,
  again,             // back-pressure: retry later
  invalid_argument,  // the request itself is wrong (bad path, size, field)
  not_found,         // a named thing (path, inode, target, chunk) does not exist
  already_exists,    // create/mkdir of an existing name
  not_a_directory,
  is_a_directory,
  not_empty,          // rmdir/unlink of a non-empty directory
  no_space,           // a target or pool is full
  timed_out,          // no answer within the named deadline
  unavailable,        // a peer, target, device or feature is not reachable/present
  corrupt,            // bytes or a message failed a checksum or bounds check
  io_error,           // a device or transport failed
  internal,           // a broken invariant inside sluice: always a bug
  in_progress,        // a retried request the server is still executing: keep waiting, do not resend
  permission_denied,  // the peer was not granted what it asked for (a region it may not reach)
};

std::string_view to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

  // Explicitly discard a status where ignoring it is correct; say why at the call site.
  void ignore() const {}

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

inline Status ok_status() { return {}; }
inline Status error(StatusCode code, std::string message) { return {code, std::move(message)}; }

// A value or the Status that explains why there is none.
// Outputs are set only on success: value() on an error is a bug (asserted).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status k_ok;
    return ok() ? k_ok : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sluice
