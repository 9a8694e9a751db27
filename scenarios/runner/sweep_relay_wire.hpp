// The frames between a sweep rank's `sluice run` process and its relay
// (`sluice run` under mpirun/srun, issue 27).
//
// SimGrid's SMPI defines MPI_Init too, so `sluice` cannot use real MPI (see
// scenarios/cli/run_command.cpp's exec_mpi_node). Under an MPI launcher, each rank's `sluice run`
// execs sluice-node, whose relay (scenarios/deploy/sweep_relay.hpp) calls
// MPI_Init, starts `sluice run` again as its child with the environment below
// and one end of a socketpair, and moves frames between that child and the
// other ranks' relays. The relay does not read payloads: the sweep's schedule
// (scenarios/runner/sweep_schedule.hpp) lives in the `sluice run` processes.
//
// Frame (little-endian): u32 payload_bytes, u32 kind, u32 rank, then
// payload_bytes bytes.
// - child -> relay, kind data: send the payload to rank `rank`.
// - relay -> child, kind data: the payload rank `rank` sent to this rank.
// - relay -> child, kind ended: rank `rank`'s `sluice run` ended (it exited
//   or died; the payload is the text of how, "exit 0" for a normal end).
//   Sent once per other rank. A rank's relay announces its own child's end
//   to every other rank, then keeps relaying until every rank's child ended,
//   then calls MPI_Finalize and exits with its child's exit status (128 + the
//   signal for one killed by a signal).
// Frames to a rank whose child ended are dropped by that rank's relay. A
// frame from the child that is not a valid data frame (an undecodable header,
// an ended frame) is a protocol error: the relay kills the child and announces
// its end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace sluice::scenario {

// The environment of a relayed `sluice run`: the socketpair end's fd, this
// rank and the number of ranks. Set by the relay; a `sluice run` that finds
// them runs its sweeps spread over the ranks.
inline constexpr const char* k_sweep_fd_env = "SLUICE_SWEEP_FD";
inline constexpr const char* k_sweep_rank_env = "SLUICE_SWEEP_RANK";
inline constexpr const char* k_sweep_size_env = "SLUICE_SWEEP_SIZE";

// Largest payload of one frame: a gather of results of many points
// (k_max_point_result_bytes each at most, but a few KiB in practice).
inline constexpr std::uint32_t k_max_sweep_frame_bytes = std::uint32_t{1} << 30;
inline constexpr std::size_t k_sweep_frame_header_bytes = 12;

enum class SweepFrameKind : std::uint32_t { data = 1, ended = 2 };

struct SweepFrameHeader {
  std::uint32_t payload_bytes = 0;
  SweepFrameKind kind = SweepFrameKind::data;
  std::uint32_t rank = 0;
};

inline std::array<std::byte, k_sweep_frame_header_bytes> encode_sweep_frame_header(const SweepFrameHeader& h) {
  std::array<std::byte, k_sweep_frame_header_bytes> out{};
  const std::uint32_t words[3] = {h.payload_bytes, static_cast<std::uint32_t>(h.kind), h.rank};
  for (std::size_t w = 0; w < 3; ++w) {
    for (std::size_t b = 0; b < 4; ++b) out[w * 4 + b] = static_cast<std::byte>((words[w] >> (8 * b)) & 0xFF);
  }
  return out;
}

// nullopt: not a valid header (a kind other than data/ended, a payload over
// k_max_sweep_frame_bytes).
inline std::optional<SweepFrameHeader> decode_sweep_frame_header(
    const std::array<std::byte, k_sweep_frame_header_bytes>& in) {
  std::uint32_t words[3] = {0, 0, 0};
  for (std::size_t w = 0; w < 3; ++w) {
    for (std::size_t b = 0; b < 4; ++b) words[w] |= std::to_integer<std::uint32_t>(in[w * 4 + b]) << (8 * b);
  }
  if (words[0] > k_max_sweep_frame_bytes) return std::nullopt;
  if (words[1] != static_cast<std::uint32_t>(SweepFrameKind::data) &&
      words[1] != static_cast<std::uint32_t>(SweepFrameKind::ended)) {
    return std::nullopt;
  }
  return SweepFrameHeader{words[0], static_cast<SweepFrameKind>(words[1]), words[2]};
}

}  // namespace sluice::scenario
