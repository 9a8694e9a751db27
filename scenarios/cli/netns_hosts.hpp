// Hosts made of network namespaces, for launchers that start processes on
// hosts by name (Open MPI's rsh launcher), so that the real-cluster path
// (`sluice run --backend cluster` under mpirun) runs end to end on one
// machine, each rank on its own "host" behind a shaped link:
//
//   sluice netns-hosts --nodes 4 --link 10gbit --
//     mpirun -np 4 --hostfile {hostfile} --mca plm_rsh_agent '{agent}'
//       sluice run study.lua --backend cluster          (one command line)
//
// netns-hosts makes the namespaces of an EmulationPlan (emulation_plan.hpp:
// a bridge, one veth link per host shaped with tc), writes a hostfile of
// their names (one slot each), runs the command inside the first host's
// namespace (network only: the file system and mounts stay the machine's),
// with {hostfile}, {hosts} (the names, comma-separated) and {agent} (this
// binary's `netns-exec`) replaced in its words, and when it ends, or on
// SIGINT/SIGTERM (passed on to it, then SIGKILL after
// k_netns_hosts_grace_s), ends what still runs in the namespaces (SIGTERM,
// SIGKILL after the same grace) and removes
// them and the hostfile's directory (where Open MPI's session directories
// go too: OMPI_MCA_orte_tmpdir_base, unless set). Its exit status is the command's. The namespaces
// carry this process's pid, so the next command that makes such things
// removes them after a SIGKILL (dead_runs.hpp); netns-hosts itself is one.
//
//   sluice netns-exec HOST WORD...
// The launch agent: runs WORD... joined by spaces with /bin/sh -c inside the
// network namespace HOST, as `ssh HOST WORD...` runs them on a remote host,
// with HOST as its host name (a UTS namespace of its own; the command of
// netns-hosts runs as the first host the same way).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/cli/command.hpp"

namespace sluice::emulate {

inline constexpr std::uint32_t k_netns_hosts_grace_s = 30;

// Adds `netns-hosts` to `app`; its exit code goes to `exit`.
void add_netns_hosts_command(CLI::App& app, cli::CommandExit& exit);

// `sluice netns-exec HOST WORD...` from main()'s argv past the command name
// (the words are the launcher's and are not parsed as options); execs on
// success, else returns the exit code after saying why.
int netns_exec(int argc, char** argv);

}  // namespace sluice::emulate
