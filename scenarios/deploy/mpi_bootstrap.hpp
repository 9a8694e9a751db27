// MpiBootstrap: the Bootstrap of node processes started by mpirun/srun.
// MPI is used for start-up only: rank -> node (rank r hosts the r-th node by
// id), the endpoint table (MPI_Allgather of lengths, then MPI_Allgatherv),
// barriers (MPI_Barrier) and the results (MPI_Gatherv to rank 0). The file
// system's bytes go through sluice's TCP transport.
//
// MPI collectives have no timeout; the bound on a stuck run is mpirun's own
// (`mpirun --timeout`), which the CI test sets. Built only where CMake found
// MPI (SLUICE_HAVE_MPI); elsewhere create() answers unavailable.
#pragma once

#include <memory>

#include "scenarios/deploy/bootstrap.hpp"

namespace sluice::emulate {

class MpiBootstrap final : public Bootstrap {
 public:
  // MPI_Init (threads: MPI_THREAD_FUNNELED; only the main thread calls MPI).
  static Result<std::unique_ptr<MpiBootstrap>> create(int* argc, char*** argv);
  ~MpiBootstrap() override;  // MPI_Finalize
  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;

  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }
  Result<std::vector<std::string>> all_gather(const std::string& mine) override;
  Status barrier(const std::string& name) override;
  Result<std::vector<std::string>> gather_to_root(const std::string& mine) override;

 private:
  MpiBootstrap(std::uint32_t rank, std::uint32_t size) : rank_(rank), size_(size) {}
  std::uint32_t rank_;
  std::uint32_t size_;
};

// Whether this build has MPI.
bool mpi_available();

}  // namespace sluice::emulate
