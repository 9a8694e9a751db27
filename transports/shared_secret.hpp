// The cluster's shared secret (TransportConfig::shared_secret) as launchers
// make and hand it out: a fresh random one per run (what `sluice run
// --backend hw`, `sluice emulate` and `sluice node --mpi` do unless told
// otherwise), or one a user keeps in a file (--shared-secret-file, the
// cluster JSON's shared_secret_file).
//
// A secret file holds the secret on its first line (a trailing newline is
// not part of it), 16..4096 bytes (k_min/k_max_shared_secret_bytes); it must
// be a regular file that other users cannot read or write (mode o-rw, as ssh
// demands of its keys): one that they can is refused with its mode in the
// message, since anyone who reads it can join the cluster.
#pragma once

#include <string>

#include "core/common/status.hpp"

namespace sluice::transport {

// Random bytes in a fresh secret (hex-encoded: twice as many characters).
inline constexpr std::size_t k_generated_secret_bytes = 32;
// Largest secret file read.
inline constexpr std::size_t k_max_secret_file_bytes = 8192;

// k_generated_secret_bytes from getrandom(2), as lowercase hex; internal when
// the kernel gives no randomness.
Result<std::string> make_shared_secret();

// The secret in `path`; invalid_argument naming the file and the problem
// (missing, not a regular file, readable or writable by others, too short or
// too long).
Result<std::string> read_shared_secret_file(const std::string& path);

// Writes `secret` to `path` with mode 0600 (created or truncated); io_error naming it.
Status write_shared_secret_file(const std::string& path, const std::string& secret);

}  // namespace sluice::transport
