#include "core/common/status.hpp"

namespace sluice {

std::string_view to_string(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::again: return "again";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::not_found: return "not_found";
    case StatusCode::already_exists: return "already_exists";
    case StatusCode::not_a_directory: return "not_a_directory";
    case StatusCode::is_a_directory: return "is_a_directory";
    case StatusCode::not_empty: return "not_empty";
    case StatusCode::no_space: return "no_space";
    case StatusCode::timed_out: return "timed_out";
    case StatusCode::unavailable: return "unavailable";
    case StatusCode::corrupt: return "corrupt";
    case StatusCode::io_error: return "io_error";
    case StatusCode::internal: return "internal";
    case StatusCode::in_progress: return "in_progress";
    case StatusCode::permission_denied: return "permission_denied";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  std::string s(sluice::to_string(code_));
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

}  // namespace sluice
