#include "hw_backends/gds/gds_path.hpp"

#include <algorithm>
#include <cctype>

namespace sluice::hw::gds {

std::string_view to_string(GdsMode mode) {
  switch (mode) {
    case GdsMode::off: return "off";
    case GdsMode::on: return "on";
    case GdsMode::auto_: return "auto";
  }
  return "?";
}

Result<GdsMode> parse_gds_mode(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "on") return GdsMode::on;
  if (lower == "off") return GdsMode::off;
  if (lower == "auto") return GdsMode::auto_;
  return error(StatusCode::invalid_argument, "GDS mode '" + std::string(text) + "' is not one of on, off, auto");
}

std::string_view to_string(GdsPath path) {
  switch (path) {
    case GdsPath::gds_direct: return "gds_direct";
    case GdsPath::cufile_compat: return "cufile_compat";
    case GdsPath::own_bounce: return "own_bounce";
  }
  return "?";
}

Result<GdsDecision> decide_gds_path(GdsMode mode, const CuFileProbe& probe) {
  if (mode == GdsMode::off) return GdsDecision{GdsPath::own_bounce, "GDS mode off: sluice's bounce pipeline"};
  const Status& failed = !probe.driver.ok() ? probe.driver : probe.handle;
  const char* step = !probe.driver.ok() ? "cuFileDriverOpen" : "cuFileHandleRegister";
  if (!failed.ok()) {
    const std::string why = std::string(step) + " failed: " + failed.message();
    if (mode == GdsMode::on) return error(StatusCode::unavailable, "GDS mode on: " + why);
    return GdsDecision{GdsPath::own_bounce, "GDS mode auto: " + why + "; sluice's bounce pipeline"};
  }
  const std::string prefix = "GDS mode " + std::string(to_string(mode)) + ": cuFile";
  if (probe.compat_forced) {
    return GdsDecision{GdsPath::cufile_compat, prefix + " in compatibility mode (forced by configuration)"};
  }
  if (!probe.nvfs_loaded) {
    return GdsDecision{GdsPath::cufile_compat, prefix + " in compatibility mode (nvidia-fs not loaded)"};
  }
  return GdsDecision{GdsPath::gds_direct, prefix + " with nvidia-fs (GPUDirect Storage)"};
}

}  // namespace sluice::hw::gds
