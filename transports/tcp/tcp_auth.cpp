#include "transports/tcp/tcp_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <string>

namespace sluice::transport::tcp {
namespace {
constexpr std::string_view k_auth_context = "sluice-tcp-auth-v3";
}

Result<AuthBytes> make_auth_nonce() {
  AuthBytes nonce{};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1) {
    return error(StatusCode::internal, "tcp transport: RAND_bytes failed to make an authentication nonce");
  }
  return nonce;
}

AuthBytes auth_proof(std::string_view secret, AuthRole prover, const AuthBytes& acceptor_nonce,
                     const AuthBytes& connector_nonce, std::uint64_t prover_id) {
  std::string input(k_auth_context);
  input += prover == AuthRole::connector ? "|connector|" : "|acceptor|";
  input.append(reinterpret_cast<const char*>(acceptor_nonce.data()), acceptor_nonce.size());
  input.append(reinterpret_cast<const char*>(connector_nonce.data()), connector_nonce.size());
  input += "|" + std::to_string(prover_id);
  AuthBytes out{};
  unsigned int out_bytes = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), reinterpret_cast<unsigned char*>(out.data()),
       &out_bytes);
  return out;
}

bool auth_proof_matches(const AuthBytes& expected, const AuthBytes& received) {
  return CRYPTO_memcmp(expected.data(), received.data(), expected.size()) == 0;
}

}  // namespace sluice::transport::tcp
