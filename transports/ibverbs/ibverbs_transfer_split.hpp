// How one put/get is cut over the queue pairs of its rail. One QP is bound
// by one HCA processing unit's rate, so large transfers are spread over the
// rail's QPs, as NCCL spreads a request over the QPs of a connection
// (net_ib/p2p.cc, NCCL_IB_QPS_PER_CONNECTION with NCCL_IB_SPLIT_DATA_ON_QPS).
// Small ones stay whole: each piece costs a work request and a completion.
#pragma once

#include <cstdint>
#include <vector>

namespace sluice::transport::ibverbs {

// Smallest piece a split transfer is cut into (the TCP transport's
// k_tcp_split_min_bytes, for the same reason: below ~1 MiB per QP the extra
// completions cost more than the parallelism gains at 100-400 Gbit/s).
inline constexpr std::uint64_t k_ibv_split_min_bytes = 1ULL << 20;

struct TransferPiece {
  std::uint64_t offset = 0;  // from the start of the transfer
  std::uint64_t bytes = 0;
};

// Pieces covering [0, bytes) in order: one piece below 2 x min_piece_bytes or
// with one connection; else min(connections, bytes / min_piece_bytes) pieces:
// equal shares rounded down to 4 KiB (pieces start page-aligned relative to
// the transfer), the last one taking the rest. bytes > 0.
std::vector<TransferPiece> split_transfer(std::uint64_t bytes, std::uint32_t connections,
                                          std::uint64_t min_piece_bytes = k_ibv_split_min_bytes);

}  // namespace sluice::transport::ibverbs
