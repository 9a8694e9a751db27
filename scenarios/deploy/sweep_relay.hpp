// The MPI relay of a sweep spread over mpirun/srun ranks (issue 27): what
// `sluice-node run ...` does. The frames and the relay's behaviour are
// scenarios/runner/sweep_relay_wire.hpp's; this is the process that follows
// them.
//
// `mpirun -np N sluice run study.lua` starts N `sluice run` processes; each
// execs sluice-node (sluice itself cannot call real MPI: scenarios/cli/run_command.cpp's
// exec_mpi_node), whose relay calls MPI_Init and starts `sluice run` again,
// as its child, with the same arguments, the `sluice` binary beside
// sluice-node, one end of a socketpair (without FD_CLOEXEC) and the
// environment of sweep_relay_wire.hpp. The relay then moves frames between
// its child and the other ranks' relays until every rank's child ended.
//
// Behaviour the caller can rely on:
// - Blocking: returns only once this rank's child ended and every other rank
//   announced the end of its own, after MPI_Finalize.
// - Return value: the child's exit status (128 + the signal for a child
//   killed by one); 1 when the child could not be started (the other ranks
//   are told how, as for a child that ended); 2 in a build without MPI.
// - A relay whose MPI calls fail calls MPI_Abort: the job ends, and every
//   child gets SIGTERM (its PR_SET_PDEATHSIG) and writes its partial results.
// - SIGTERM/SIGINT are forwarded to the child (which writes its partial
//   results and exits); the relay goes on relaying until it has.
// - The relay never blocks on its child: frames to it wait in a queue
//   written when the socket is writable. Frames from it are sent with
//   MPI_Isend; the relay stops reading the child while too many sends are in
//   flight, which cannot deadlock because every relay keeps receiving.
// - Limits (the .cpp names each): a queue to the child that outgrows its
//   bound, a frame header that does not decode, or a frame kind other than
//   data from the child gets the child killed (SIGKILL), said on stderr, and
//   its end announced as for any other end.
//
// The child starts with fork() after MPI_Init and calls only
// async-signal-safe functions before execve (MPI's threads may hold locks);
// nothing of MPI is touched in it, and MPI's descriptors are not inherited
// (close_range with CLOSE_RANGE_CLOEXEC: only 0-2 and the socket reach
// `sluice run`).
#pragma once

namespace sluice::emulate {

// MPI_Init_thread (MPI_THREAD_FUNNELED: only the calling thread uses MPI),
// MPI_ERRORS_RETURN, then the relay as above; argv is `sluice-node run ...`
// and becomes the child's argv with argv[0] replaced by the `sluice` path.
int run_sweep_relay(int argc, char** argv);

}  // namespace sluice::emulate
