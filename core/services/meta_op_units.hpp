// MetaOpUnits: how much service time one request of each kind costs a
// metadata server of a given implementation, in units of the Env's cost of
// that CostKind (MetaService calls Env::compute(kind, units)).
//
// Why units and not nanoseconds here: the Env owns time (SimEnv takes
// cost_ns_per_unit from its calibrated profile, HwEnv completes at once, the
// real work having happened), while what differs between file systems is
// how much work their metadata server does per request. The sim profile's
// metadata costs are those of an in-kernel Lustre MDT (1 unit per request,
// sim/sim_profile.hpp); a BeeGFS metadata server costs a multiple of that.
//
// What a unit of service time means in simulation: a metadata server is one
// queue (SimEnv runs a service's computes one at a time, FIFO), so cost x
// units is the inverse of the rate at which the server completes that
// request when saturated, however many worker threads it spreads them over
// (BeeGFS tuneNumWorkers: 0 = twice the CPU cores, at least 4,
// beegfs-meta.conf); the workers raise concurrency, but the measured
// saturated rates below are what they reach together.
//
// BeeGFS (beegfs_meta_op_units): beegfs-meta is a user-space daemon that
// stores every dentry and inlined inode as a file with extended attributes
// in a local file system (storeUseExtendedAttribs, beegfs-meta.conf), so a
// create is several journaled local-FS operations (dentry file, xattrs, the
// parent's DirInode update) and a stat reads an xattr through the daemon.
// Per metadata server, IO500/mdtest-class figures are ~10-16 k creates/s
// and ~50-70 k stats/s (issue #7; to be calibrated with `sluice calibrate`
// and bench-meta): with the default profile (MDT stat and create 5 us)
// stat = 3 units (15 us, ~67 k/s) and create = 14 units (70 us, ~14 k/s).
// Every open and every close of a file is one request to the owner of its
// directory (BeeGFS OpenFileMsgEx / CloseFileMsgEx keep a session per open
// file: meta/source/net/message/session/opening/); the close updates the
// session store and, after a write, the inode's size: costed as a stat.
// Lustre (lustre_mdt_op_units): 1 unit everywhere; the profile's costs are
// the MDT's (docs/seeds.md#sharded-metadata: one MDT ~200,000 ops/s).
#pragma once

#include <cstdint>

#include "core/common/status.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/common/field_info.hpp"

namespace sluice {

// Largest units of one request (a request costing more than 1000 MDT
// requests would be a configuration error).
inline constexpr std::uint32_t k_meta_op_units_max = 1000;

struct MetaOpUnits {
  std::uint32_t lookup = 1;         // Lookup (an open)
  std::uint32_t stat = 1;           // Stat
  std::uint32_t create = 1;         // Create (open with O_CREAT)
  std::uint32_t mkdir = 1;          // Mkdir
  std::uint32_t readdir_entry = 1;  // per entry of a Readdir page
  std::uint32_t unlink = 1;         // Unlink, Rmdir
  std::uint32_t rename = 1;         // Rename
  std::uint32_t setattr = 1;        // SetAttr: a close (with or without a new size)
  bool operator==(const MetaOpUnits&) const = default;
};

// Its fields, one description each (core/common/field_info.hpp).
template <class V>
void fields(V& v, MetaOpUnits& c) {
  const double max = k_meta_op_units_max;
  v("lookup", c.lookup, count_of("units", 0, max, "service units of a Lookup (an open)"));
  v("stat", c.stat, count_of("units", 0, max, "service units of a Stat"));
  v("create", c.create, count_of("units", 0, max, "service units of a Create"));
  v("mkdir", c.mkdir, count_of("units", 0, max, "service units of a Mkdir"));
  v("readdir_entry", c.readdir_entry, count_of("units", 0, max, "service units per entry of a Readdir page"));
  v("unlink", c.unlink, count_of("units", 0, max, "service units of an Unlink or Rmdir"));
  v("rename", c.rename, count_of("units", 0, max, "service units of a Rename"));
  v("setattr", c.setattr, count_of("units", 0, max, "service units of a SetAttr (a close)"));
}

// All 1: the sim profile's metadata costs are a Lustre MDT's.
MetaOpUnits lustre_mdt_op_units();
// BeeGFS beegfs-meta, as derived in the header comment.
MetaOpUnits beegfs_meta_op_units();
// The units of the file system a stripe flavor stands for.
MetaOpUnits meta_op_units_for(StripeFlavor flavor);

// invalid_argument naming the field when one is above k_meta_op_units_max
// (0 is allowed: a request that costs nothing).
Status validate(const MetaOpUnits& units);

}  // namespace sluice
