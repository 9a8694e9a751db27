// Which extended-attribute names the file system keeps (Linux xattr(7)):
// the user., trusted. and security. namespaces. system.* is POSIX ACLs and
// the kernel's side of file capabilities, which sluice does not enforce; the
// metadata server refuses those names and the mount answers EOPNOTSUPP.
#pragma once

#include <string_view>

namespace sluice::proto {

inline bool is_kept_xattr_name(std::string_view name) {
  for (std::string_view prefix : {"user.", "trusted.", "security."}) {
    if (name.size() > prefix.size() && name.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace sluice::proto
