// Bootstrap: how the node processes of one deployment find each other and
// keep in step. Used only to start, synchronise and gather: every byte of
// the file system's traffic goes through sluice's own transport.
//
// Implementations:
//   MpiBootstrap     under mpirun/srun: rank -> node, MPI_Allgather(v),
//                    MPI_Barrier, MPI_Gatherv to rank 0 (mpi_bootstrap.hpp)
//   SocketBootstrap  a node process started by a launcher (`sluice mount`, a rank): the
//                    launcher holds the other end of a socket (fd 3) and
//                    answers collectives when every node has asked
//                    (socket_bootstrap.hpp)
//   LocalBootstrap   threads of one process (tests; local_bootstrap.hpp)
//
// Every call is collective (all ranks call it, in the same order) and
// bounded: a rank that never arrives makes the others fail with timed_out
// (or unavailable when its process is known dead) instead of hanging.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::emulate {

// One contribution to a collective (an endpoint table entry, a results document).
inline constexpr std::size_t k_max_bootstrap_item_bytes = 16 << 20;

// The answer to one collective as the coordinating side sends it
// ({"ok": true, "all": [...]} or {"ok": false, "error": "..."}: the
// launcher of socket_bootstrap.hpp, rank 0 of rank_bootstrap.hpp): its items,
// unavailable with the error it carries, or corrupt naming `what` and `from`
// when it is malformed. Every field's type is checked before it is read.
Result<std::vector<std::string>> parse_collective_answer(const std::string& text, const std::string& what,
                                                         const std::string& from);
// The coordinating side's answers, as parse_collective_answer reads them:
// the round's items (empty for a barrier, and for a gather's other ranks),
// or its failure.
std::string collective_answer_text(const std::vector<std::string>& all);
std::string collective_failure_text(const std::string& why);

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  // Everyone's `mine`, indexed by rank.
  virtual Result<std::vector<std::string>> all_gather(const std::string& mine) = 0;
  // Returns when every rank has called barrier with the same name.
  virtual Status barrier(const std::string& name) = 0;
  // Everyone's `mine` at rank 0 (other ranks get an empty vector). For the
  // socket bootstrap the launcher is the root and rank 0 also gets empty.
  virtual Result<std::vector<std::string>> gather_to_root(const std::string& mine) = 0;
};

}  // namespace sluice::emulate
