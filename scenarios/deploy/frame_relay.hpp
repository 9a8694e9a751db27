// FrameRelay: the relay of ranks that are processes of one machine, for
// `sluice run --backend emulate` (netns_ranks.hpp). Each rank's process holds
// one end of a socketpair and speaks the frames of sweep_relay_wire.hpp to it,
// exactly as a rank under mpirun speaks them to its MPI relay
// (sweep_relay.hpp); this relay holds the other ends and moves each data
// frame to the rank it names, stamped with the sender. When a rank's socket
// closes (its process ended) or it sends what is not a data frame to another
// rank, the relay closes that socket and announces the end once to every
// other rank still there (an ended frame with `how`). So the ranks'
// scenario::SweepSchedule and RankBootstrap (rank_bootstrap.hpp) are the
// cluster path's own, whatever launched them.
//
// Single-threaded and non-blocking: the owner polls the relay's fds with its
// own (a result pipe, a stop pipe) and hands the results back. Frames wait in
// a queue per rank until its socket takes them; a rank that stops reading
// while k_max_relay_queue_bytes wait for it is ended, never waited on forever.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::emulate {

inline constexpr std::size_t k_max_relay_queue_bytes = std::size_t{1} << 31;
// Bytes read from one rank per readable poll before the others get a turn.
inline constexpr std::size_t k_relay_read_chunk_bytes = std::size_t{1} << 20;

class FrameRelay {
 public:
  // The relay's ends of the ranks' sockets, by rank; they become
  // non-blocking and are closed by the relay.
  explicit FrameRelay(std::vector<int> fds);
  ~FrameRelay();
  FrameRelay(const FrameRelay&) = delete;
  FrameRelay& operator=(const FrameRelay&) = delete;

  std::uint32_t size() const { return static_cast<std::uint32_t>(peers_.size()); }
  // Ranks whose socket is still open.
  std::uint32_t open_count() const;
  bool is_open(std::uint32_t rank) const { return peers_[rank].fd >= 0; }

  // Appends one pollfd per rank (fd -1 for an ended one, which poll skips).
  void add_polls(std::vector<pollfd>& polls) const;
  // Acts on the polled events of the add_polls entries that begin at `first`.
  void on_polled(const pollfd* first);
  // Ends `rank` (its process is known to have ended, or it is being killed).
  void end(std::uint32_t rank, const std::string& how);

 private:
  struct Peer {
    int fd = -1;
    std::string in;   // bytes read, not yet a whole frame
    std::string out;  // frames for it, not yet written
    std::size_t out_sent = 0;
  };
  void read_from(std::uint32_t rank);
  void write_to(std::uint32_t rank);
  // Routes the whole frames at the front of `rank`'s input.
  void route_from(std::uint32_t rank);
  void queue(std::uint32_t to, std::uint32_t kind, std::uint32_t rank, const std::string& payload);

  std::vector<Peer> peers_;
};

}  // namespace sluice::emulate
