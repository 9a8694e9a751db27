// The sweeper of dead runs: what runs killed with SIGKILL (or cut off by a
// crash of the machine) left on this machine, removed at the start of every
// command that makes such things (`sluice run --backend hw|emulate|cluster`,
// `sluice mount` and `umount`, `sluice netns-hosts`) and by the hidden
// `sluice emulate --cleanup-stale`:
//  - FUSE mounts of sluice (type fuse.sluice, source sluice-<pid>-<tag>) of
//    such runs (below): detached (the mount point answers "transport endpoint
//    is not connected" until then);
//  - network namespaces sluice-emu-<pid>-<tag>-* of such runs, with what
//    still runs in them;
//  - directories sluice-emu-*, sluice-hw-run-* and sluice-rank-* under /tmp and the given
//    roots whose owner mark (base/run_marker.hpp) names a process that is
//    gone, unless marked kept (`--keep`: those stay until the user removes them).
// A launcher is gone when the owner mark of its namespaces (netns_cluster.hpp:
// pid and start time) names a process that no longer runs, the pid reused by
// a later process included; namespaces without a mark, by the pid in their
// name alone. The shm transport's shared memory is memfds and abstract
// sockets, gone with their processes: nothing of it is left to sweep.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::emulate {

// The private directory of a rank other than 0 of a sweep over ranks (`sluice run` under mpirun).
inline constexpr std::string_view k_rank_dir_prefix = "sluice-rank-";

// A FUSE mount of sluice in this process's mount namespace (/proc/self/mountinfo).
struct SluiceMount {
  std::string point;   // absolute, as the mount table names it
  std::string source;  // "sluice-<run id>" (MountOptions::fs_name)
};
std::vector<SluiceMount> sluice_mounts();

// Whether a FUSE file system of sluice is mounted at `point` (absolute, normalised).
bool sluice_mounted_at(const std::string& point);

// A sluice mount at `point` whose server is gone (stat fails with ENOTCONN):
// detached; true when it did.
bool detach_dead_mount(const std::string& point);

// Sweeps what dead runs left (see above), saying each thing removed (or not
// removable) to `log` (may be empty); returns the names and paths removed.
// Namespaces and mounts are left alone without root (they cannot be removed).
std::vector<std::string> sweep_dead_runs(const std::vector<std::string>& roots,
                                         const std::function<void(std::string_view)>& log);

}  // namespace sluice::emulate
