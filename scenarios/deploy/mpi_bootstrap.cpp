#include "scenarios/deploy/mpi_bootstrap.hpp"

#ifdef SLUICE_HAVE_MPI
#include <mpi.h>
#endif

namespace sluice::emulate {

#ifdef SLUICE_HAVE_MPI

namespace {

Status mpi_failed(const std::string& what, int code) {
  if (code == MPI_SUCCESS) return ok_status();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return error(StatusCode::unavailable,
               "MPI bootstrap: " + what + ": " + std::string(text, static_cast<std::size_t>(length)));
}

std::vector<std::string> split(const std::vector<char>& bytes, const std::vector<int>& lengths,
                               const std::vector<int>& offsets) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.emplace_back(bytes.data() + offsets[i], static_cast<std::size_t>(lengths[i]));
  }
  return out;
}

Status check_size(const std::string& mine) {
  if (mine.size() > k_max_bootstrap_item_bytes) {
    return error(StatusCode::invalid_argument, "MPI bootstrap: " + std::to_string(mine.size()) + " bytes over the " +
                                                   std::to_string(k_max_bootstrap_item_bytes) + "-byte limit");
  }
  return ok_status();
}

}  // namespace

bool mpi_available() { return true; }

Result<std::unique_ptr<MpiBootstrap>> MpiBootstrap::create(int* argc, char*** argv) {
  int provided = 0;
  if (Status st = mpi_failed("MPI_Init_thread", MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
      !st.ok()) {
    return st;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::unique_ptr<MpiBootstrap>(
      new MpiBootstrap(static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(size)));
}

MpiBootstrap::~MpiBootstrap() { MPI_Finalize(); }

Result<std::vector<std::string>> MpiBootstrap::all_gather(const std::string& mine) {
  if (Status st = check_size(mine); !st.ok()) return st;
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size_), offsets(size_);
  if (Status st =
          mpi_failed("MPI_Allgather", MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD));
      !st.ok()) {
    return st;
  }
  int total = 0;
  for (std::size_t i = 0; i < size_; ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::vector<char> bytes(static_cast<std::size_t>(total) + 1);
  if (Status st =
          mpi_failed("MPI_Allgatherv", MPI_Allgatherv(mine.data(), length, MPI_CHAR, bytes.data(), lengths.data(),
                                                      offsets.data(), MPI_CHAR, MPI_COMM_WORLD));
      !st.ok()) {
    return st;
  }
  return split(bytes, lengths, offsets);
}

Status MpiBootstrap::barrier(const std::string& name) {
  return mpi_failed("MPI_Barrier " + name, MPI_Barrier(MPI_COMM_WORLD));
}

Result<std::vector<std::string>> MpiBootstrap::gather_to_root(const std::string& mine) {
  if (Status st = check_size(mine); !st.ok()) return st;
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(size_), offsets(size_);
  if (Status st =
          mpi_failed("MPI_Gather", MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
      !st.ok()) {
    return st;
  }
  int total = 0;
  for (std::size_t i = 0; i < size_; ++i) {
    offsets[i] = total;
    total += lengths[i];
  }
  std::vector<char> bytes(static_cast<std::size_t>(total) + 1);
  if (Status st = mpi_failed("MPI_Gatherv", MPI_Gatherv(mine.data(), length, MPI_CHAR, bytes.data(), lengths.data(),
                                                        offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD));
      !st.ok()) {
    return st;
  }
  if (rank_ != 0) return std::vector<std::string>{};
  return split(bytes, lengths, offsets);
}

#else  // no MPI in this build

bool mpi_available() { return false; }

Result<std::unique_ptr<MpiBootstrap>> MpiBootstrap::create(int* /*argc*/, char*** /*argv*/) {
  return error(StatusCode::unavailable,
               "MPI bootstrap: this build has no MPI (install libopenmpi-dev and reconfigure)");
}
MpiBootstrap::~MpiBootstrap() = default;
Result<std::vector<std::string>> MpiBootstrap::all_gather(const std::string&) {
  return error(StatusCode::unavailable, "MPI bootstrap: no MPI");
}
Status MpiBootstrap::barrier(const std::string&) { return error(StatusCode::unavailable, "MPI bootstrap: no MPI"); }
Result<std::vector<std::string>> MpiBootstrap::gather_to_root(const std::string&) {
  return error(StatusCode::unavailable, "MPI bootstrap: no MPI");
}

#endif

}  // namespace sluice::emulate
