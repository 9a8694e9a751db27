#include "core/services/meta_op_units.hpp"

#include <string>
#include <utility>

namespace sluice {

MetaOpUnits lustre_mdt_op_units() { return MetaOpUnits{}; }

MetaOpUnits beegfs_meta_op_units() {
  // Relative to the default profile's MDT costs (sim/sim_profile.hpp: lookup,
  // stat and create 5 us, mkdir 10 us, unlink and rename 5 us, setattr
  // 3 us); meta_op_units.hpp says where the BeeGFS rates come from.
  MetaOpUnits u;
  u.lookup = 3;         // 15 us: ~67 k opens/s
  u.stat = 3;           // 15 us: ~67 k stats/s
  u.create = 14;        // 70 us: ~14 k creates/s
  u.mkdir = 7;          // 70 us: a create of a directory (plus its DirInode)
  u.unlink = 14;        // 70 us: the create's local-FS work undone (mdtest removal rates match creates)
  u.rename = 7;         // 35 us: two dentry updates in one directory
  u.setattr = 5;        // 15 us: a close, costed as a stat
  u.readdir_entry = 1;  // a getdents entry of the dentries directory
  return u;
}

MetaOpUnits meta_op_units_for(StripeFlavor flavor) {
  return flavor == StripeFlavor::lustre ? lustre_mdt_op_units() : beegfs_meta_op_units();
}

Status validate(const MetaOpUnits& units) {
  const std::pair<const char*, std::uint32_t> fields[] = {
      {"lookup", units.lookup},   {"stat", units.stat},
      {"create", units.create},   {"mkdir", units.mkdir},
      {"unlink", units.unlink},   {"rename", units.rename},
      {"setattr", units.setattr}, {"readdir_entry", units.readdir_entry}};
  for (const auto& [name, value] : fields) {
    if (value > k_meta_op_units_max) {
      return error(StatusCode::invalid_argument, "metadata op units: " + std::string(name) + " = " +
                                                     std::to_string(value) + " is above " +
                                                     std::to_string(k_meta_op_units_max));
    }
  }
  return ok_status();
}

}  // namespace sluice
