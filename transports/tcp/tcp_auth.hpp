// Connection authentication of the TCP transport: a mutual challenge-response
// over the cluster's shared secret (TransportConfig::shared_secret).
//
// BeeGFS authenticates connections with a "connAuthFile" whose hash every
// peer sends; a captured hash then opens every door. Here each side sends a
// fresh 32-byte nonce (challenge) and the other answers with
//   proof = HMAC-SHA256(secret, "sluice-tcp-auth-v2" | role | nonce | id)
// where role is the prover's side ("connector" or "acceptor"), so a proof is
// good for one connection only and cannot be reflected back to its sender,
// and id is the prover's node id (TransportConfig::local_id, carried in the
// proof packet's header): a peer's identity is what it proved, and its hello
// must claim that same id or the connection is refused (v2; v1 bound no id).
// The exchange on a new connection (both sides send their challenge first):
//   acceptor  -> challenge(Na)          connector -> challenge(Nc)
//   acceptor  -> proof(Nc)              connector -> proof(Na)
// Until a side has checked the other's proof it accepts only challenge and
// proof packets and sends nothing else (the connector's hello waits).
// Nonces come from OpenSSL's RAND_bytes; proofs are compared in constant time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::transport::tcp {

inline constexpr std::size_t k_tcp_auth_bytes = 32;
using AuthBytes = std::array<std::byte, k_tcp_auth_bytes>;

enum class AuthRole : std::uint8_t { connector, acceptor };

// A fresh random nonce; internal if the random generator fails.
Result<AuthBytes> make_auth_nonce();
// The proof the side `prover`, node `prover_id`, gives for `nonce` (the other side's challenge).
AuthBytes auth_proof(std::string_view secret, AuthRole prover, const AuthBytes& nonce, std::uint64_t prover_id);
// Constant-time comparison of a received proof with the expected one.
bool auth_proof_matches(const AuthBytes& expected, const AuthBytes& received);

}  // namespace sluice::transport::tcp
