// Which path a file -> GPU read takes: GPUDirect Storage, cuFile in
// compatibility mode, or sluice's own bounce pipeline.
//
// The mode follows KvikIO's CompatMode (kvikio/defaults.hpp, ON/OFF/AUTO;
// there ON means "compat on", here it means "GDS on"):
//   on    cuFile or fail, with the reason (driver open, handle registration);
//   auto  cuFile when cuFileDriverOpen and cuFileHandleRegister succeed,
//         else the own bounce pipeline (hw_backends/cuda/bounce_pipeline.hpp);
//   off   the own bounce pipeline.
// When cuFile is used, whether it moves bytes directly (GDS: NVMe/NIC DMA into
// GPU memory through the nvidia-fs kernel module) or in its compatibility
// mode (POSIX reads into its own pinned buffers plus a copy) depends on
// nvidia-fs: cuFileDriverGetProperties reports nvfs version 0.0 when the
// module is not loaded (KvikIO's DriverProperties::is_gds_available() reads it
// the same way), and CUFILE_PARAM_FORCE_COMPAT_MODE forces compatibility.
//
// decide_gds_path() is a pure function of the mode and what the probe saw,
// so it is unit-tested everywhere; the path's name goes into logs and results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice::hw::gds {

enum class GdsMode : std::uint8_t { off = 0, on = 1, auto_ = 2 };
std::string_view to_string(GdsMode mode);
// "on", "off", "auto" (case-insensitive); invalid_argument naming the text.
Result<GdsMode> parse_gds_mode(std::string_view text);

enum class GdsPath : std::uint8_t {
  gds_direct = 0,     // cuFile with nvidia-fs: DMA into GPU memory
  cufile_compat = 1,  // cuFile without nvidia-fs (or forced): its own POSIX bounce
  own_bounce = 2,     // sluice's bounce pipeline
};
std::string_view to_string(GdsPath path);  // "gds_direct", "cufile_compat", "own_bounce"

// What probing cuFile for one file found.
struct CuFileProbe {
  Status driver;               // cuFileDriverOpen: ok or why not
  Status handle;               // cuFileHandleRegister of the file: ok or why not (unset when driver failed)
  bool nvfs_loaded = false;    // cuFileDriverGetProperties: nvidia-fs version is not 0.0
  bool compat_forced = false;  // CUFILE_PARAM_FORCE_COMPAT_MODE is set
};

struct GdsDecision {
  GdsPath path = GdsPath::own_bounce;
  std::string reason;  // one sentence for logs and results
};

// mode on with a failed driver or handle: unavailable with the reason.
Result<GdsDecision> decide_gds_path(GdsMode mode, const CuFileProbe& probe);

}  // namespace sluice::hw::gds
