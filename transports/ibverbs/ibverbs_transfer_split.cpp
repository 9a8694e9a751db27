#include "transports/ibverbs/ibverbs_transfer_split.hpp"

#include <algorithm>

namespace sluice::transport::ibverbs {

namespace {
constexpr std::uint64_t k_piece_alignment_bytes = 4096;
}

std::vector<TransferPiece> split_transfer(std::uint64_t bytes, std::uint32_t connections,
                                          std::uint64_t min_piece_bytes) {
  if (connections <= 1 || min_piece_bytes == 0 || bytes < 2 * min_piece_bytes) return {TransferPiece{0, bytes}};
  const std::uint64_t count = std::min<std::uint64_t>(connections, bytes / min_piece_bytes);
  // Equal shares rounded down to the alignment; the last piece takes the rest.
  std::uint64_t share = bytes / count;
  share -= share % k_piece_alignment_bytes;
  if (share == 0) return {TransferPiece{0, bytes}};
  std::vector<TransferPiece> pieces;
  std::uint64_t at = 0;
  for (std::uint64_t i = 0; i + 1 < count; ++i) {
    pieces.push_back(TransferPiece{at, share});
    at += share;
  }
  pieces.push_back(TransferPiece{at, bytes - at});
  return pieces;
}

}  // namespace sluice::transport::ibverbs
