// CRC32C (Castagnoli polynomial 0x1EDC6F41, reflected, init and final xor
// 0xFFFFFFFF): the checksum of iSCSI (RFC 3720 appendix B.4), ext4 and btrfs
// metadata, and the one sluice frames and chunks carry.
//
// Computed by ISA-L's crc32_iscsi (libisal, <isa-l/crc.h>), which picks the
// SSE4.2/PCLMUL/AVX-512 kernel at run time. ISA-L is the one non-standard
// library core/ may use, because crc32c is a pure function of its input: no
// state, no I/O, the same answer in SimEnv, HwEnv and TestEnv.
//
// ISA-L's convention: crc32_iscsi(buf, len, seed) neither inverts its seed nor
// its result, so the standard value is ~crc32_iscsi(buf, len, ~previous). We
// hide that: crc32c() returns the standard CRC and chains, i.e.
//   crc32c(b, crc32c(a)) == crc32c(a ++ b)   and   crc32c("123456789") == 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::proto {

// Known answer of the "123456789" check string (RFC 3720 B.4; Koopman's CRC catalogue).
inline constexpr std::uint32_t k_crc32c_check_value = 0xE3069283u;

// The CRC32C of `bytes`, continuing from `previous` (the CRC32C of what came
// before; 0 for the start). Any length, including 0 (returns `previous`).
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t previous = 0);
std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t previous = 0);

// Combining CRCs without the bytes (zlib's crc32_combine, for the Castagnoli
// polynomial): for any A and B with |B| = bytes,
//   crc32c(A ++ B) == Crc32cShift(bytes).apply(crc32c(A)) ^ crc32c(B).
// The operator (multiplication by x^(8 * bytes) modulo the polynomial, a
// 32 x 32 matrix over GF(2)) is built once; apply() costs 32 steps. Used to
// derive a buffer's CRC from the CRCs of its blocks (hw_backends, CRC32C at
// rest) instead of reading the bytes twice.
class Crc32cShift {
 public:
  explicit Crc32cShift(std::uint64_t bytes);
  std::uint32_t apply(std::uint32_t crc) const;

 private:
  std::uint32_t columns_[32] = {};  // the image of each bit of a CRC
};

}  // namespace sluice::proto
