// Connection authentication of the TCP transport: a mutual challenge-response
// over the cluster's shared secret (TransportConfig::shared_secret).
//
// BeeGFS authenticates connections with a "connAuthFile" whose hash every
// peer sends; a captured hash then opens every door. Here each side sends a
// fresh 32-byte nonce (challenge): Na from the acceptor, Nc from the
// connector; each side then proves knowledge of the secret with
//   proof = HMAC-SHA256(secret, "sluice-tcp-auth-v3" | role | Na | Nc | id)
// where role is the prover's side ("connector" or "acceptor"), so a proof
// cannot be reflected back to its sender; both nonces are in it, so a proof
// is good for this connection only and neither side ever signs bytes only
// the other side chose; and id is the prover's node id
// (TransportConfig::local_id, carried in the proof packet's header): a
// peer's identity is what it proved, and its hello must claim that same id
// or the connection is refused.
// The exchange on a new connection:
//   acceptor  -> challenge(Na)          connector -> challenge(Nc)
//                                       connector -> proof        (once Na arrived)
//   acceptor  -> proof                  (once the connector's proof checked out)
//                                       connector -> hello        (once the acceptor's proof checked out)
// The connector proves first: the acceptor, which anyone can reach, signs
// nothing until its peer proved knowledge of the secret, so a stranger that
// connects gets no proof to relay or study (v2 answered every challenge at
// once, from anyone, as often as asked: issue 47). v3 is not compatible with
// v2 (the proof covers both nonces): every node of a cluster runs one build.
// Each side takes exactly one challenge and then one proof from its peer;
// anything else before the proof checked out closes the connection, logged
// with the peer's address (tcp_transport.hpp: the pre-authentication bounds).
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
// The proof the side `prover`, node `prover_id`, gives on a connection
// whose acceptor sent challenge `acceptor_nonce` and whose connector sent `connector_nonce`.
AuthBytes auth_proof(std::string_view secret, AuthRole prover, const AuthBytes& acceptor_nonce,
                     const AuthBytes& connector_nonce, std::uint64_t prover_id);
// Constant-time comparison of a received proof with the expected one.
bool auth_proof_matches(const AuthBytes& expected, const AuthBytes& received);

}  // namespace sluice::transport::tcp
