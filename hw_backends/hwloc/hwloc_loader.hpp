// Loads untrusted hwloc XML in a separate loader process, so that libhwloc's
// failures on bad input cost an error, not the caller's process.
//
// Why: libhwloc's XML reader trusts its input. hwloc 2.9 (Debian 12)
// dereferences a null bitmap on an object without complete_nodeset, fails an
// assert() on some bitmap strings, casts any bridge_type / osdev_type number
// into its enums, and builds bitmaps as large as the indices it is given (a
// PU or NUMA node without os_index: a 2^32-bit set, ~1 GiB in all, and 16-50
// s to re-export as 134 MB of XML). All found by
// tests/fuzz/fuzz_hwloc_xml.cpp; the inputs are in
// tests/fuzz/regressions/hwloc_xml/.
//
// How (a reusable worker, like a browser's utility process):
// - The first load forks one loader process; it serves load requests over a
//   socket pair, one at a time, each in a fresh hwloc topology, and is reused
//   for up to HwlocLoaderLimits::loads_per_process loads. Forking the caller
//   (a large process under ASan in `make fuzz`) per input cost more than the
//   load itself; see docs/reliability.md for the numbers.
// - The loader is killed and replaced (by the next load) when it dies, aborts,
//   overruns the time bound, breaks the reply protocol, or after its quota of
//   loads. A load that libhwloc refuses cleanly (an error return from
//   hwloc_topology_load) or that the checks below refuse does not replace it:
//   that is libhwloc's ordinary error path, the topology is destroyed, and the
//   next load starts from a fresh one.
// - Bounds per load: timeout_ms of wall time for the whole request (the caller
//   SIGKILLs the loader after that) and memory_bytes +
//   memory_bytes_per_xml_byte x the XML's size of new memory (RLIMIT_DATA,
//   set per request above what the loader already holds as
//   /proc/self/status tells, never above the caller's own limit; without
//   /proc, only the time bound holds; an allocation past it fails inside
//   libhwloc, which then refuses the XML or dies on it).
// - What the loader hands back is libhwloc's re-export of what it loaded,
//   after checks on the loaded topology: every cpuset/nodeset finite with no
//   index above k_hwloc_max_set_index, PUs and NUMA nodes with an os_index in
//   that range, bridge and OS device types that hwloc's enums define. The
//   loader then loads that re-export itself and checks it again, so the
//   caller only ever loads (in-process, unprotected) XML that a loader has
//   already loaded within the bounds.
//
// State carried between loads in one loader process (the isolation given up
// against a process per input): libhwloc's component registry (loaded once,
// read-only afterwards) and libxml2's parser globals; memory that a refused
// load leaked inside libhwloc (bounded by the per-load memory bound and the
// quota). Nothing of one input is visible to the next: each load has its own
// topology and its reply carries only that load's result. Besides, the loader
// is a copy of the caller as it was at the fork (the first load after a
// replacement), not at each load.
//
// Contract
// - Blocking: load() blocks for at most about timeout_ms (plus a fork when a
//   new loader process is needed). CPU work is in the loader process.
// - Thread-safety: one caller at a time per HwlocLoader (not synchronised).
//   The loader process is forked from the calling process: fork while another
//   thread is inside libhwloc may leave the new loader stuck on a lock, and
//   that load then fails after timeout_ms. import_hwloc_xml's shared loader
//   serialises every import (and its in-process hwloc use) for that reason.
// - Lifetime: the loader process is tied to the thread that forked it
//   (PR_SET_PDEATHSIG: if that thread ends, so does the loader; the next load
//   starts a new one, a load in flight then fails) and to the socket (it
//   exits when the caller closes it); the destructor kills and reaps it. It
//   runs in its own process group, so a terminal's Ctrl-C reaches only the
//   caller. It keeps no file descriptor of the caller's open.
// - Not a sandbox: the loader has the caller's user, files and memory image
//   (it is a fork). It contains libhwloc's crashes, aborts, hangs and memory
//   blow-ups; it does not confine code that an exploited libhwloc would run.
#pragma once

#include <hwloc.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "core/common/units.hpp"

namespace sluice::hw {

// Largest XML the loader accepts, and the largest re-export it hands back.
inline constexpr std::size_t k_max_hwloc_xml_bytes = 64 * k_mib;
// Wall-clock limit on libhwloc loading one XML: a real machine's XML loads in
// milliseconds.
inline constexpr int k_hwloc_load_timeout_ms = 5000;
// Largest CPU or NUMA index (bit of a cpuset/nodeset) a loaded topology may
// use: Linux allows at most 8192 CPUs (x86 MAXSMP) and 1024 NUMA nodes
// (NODES_SHIFT 10); 65,535 leaves room and keeps every bitmap within 8 KiB.
inline constexpr unsigned k_hwloc_max_set_index = 65535;

struct HwlocLoaderLimits {
  int timeout_ms = k_hwloc_load_timeout_ms;
  // New memory one load may take. libhwloc holds about 20 bytes per XML
  // byte (measured with hwloc 2.9: a 6 MB XML of 20,000 PCI devices peaks at
  // 105 MB and loads in ~1 s; XML much above 10 MB overruns timeout_ms
  // first), so legitimate XML stays well inside; a 2^32-bit bitmap (512 MiB)
  // does not.
  std::size_t memory_bytes = 256 * k_mib;
  std::size_t memory_bytes_per_xml_byte = 24;
  // Loads one loader process serves before it is replaced.
  std::uint32_t loads_per_process = 1000;
};

class HwlocLoader {
 public:
  explicit HwlocLoader(HwlocLoaderLimits limits = {});
  ~HwlocLoader();
  HwlocLoader(const HwlocLoader&) = delete;
  HwlocLoader& operator=(const HwlocLoader&) = delete;

  // Loads `xml` in the loader process and returns libhwloc's re-export of
  // the topology it built (see above). Errors: invalid_argument when libhwloc
  // refuses the XML, crashes, aborts or overruns a bound on it, or the
  // topology fails the checks (the message says which, with what libhwloc
  // printed); internal when the loader process cannot be started or talked
  // to for reasons that are not the input's.
  Result<std::string> load(std::string_view xml);

  // Loader processes started so far, and loads served by the current one
  // (for tests and the fuzz harness's accounting).
  std::uint64_t processes_started() const { return processes_started_; }
  std::uint32_t loads_by_current_process() const { return loads_by_current_; }

 private:
  Status start();
  // Kills (SIGKILL) and reaps the loader process, if any; its wait status, or -1.
  int stop();
  // Whether the loader process is running; reaps it when it is not.
  bool alive();

  HwlocLoaderLimits limits_;
  pid_t owner_;  // the process that made this loader (a fork of it must not stop its loader process)
  hwloc_topology_t keeper_ = nullptr;  // keeps libhwloc's plugins loaded (here and in each fork)
  pid_t pid_ = -1;
  int socket_fd_ = -1;  // requests and replies
  int said_fd_ = -1;    // what the loader printed on stdout/stderr (libhwloc's and the sanitizers' words)
  std::uint64_t processes_started_ = 0;
  std::uint32_t loads_by_current_ = 0;
};

// Loads XML that a HwlocLoader handed back into `topology` (initialised, not
// yet loaded) in this process, with I/O objects kept. Never give it other XML.
[[nodiscard]] Status load_checked_hwloc_xml(hwloc_topology_t topology, const std::string& xml);

}  // namespace sluice::hw
