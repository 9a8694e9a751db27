// WrappedTcpTransport: a test transport that is TCP underneath but declares
// what a test needs beyond TCP (one-sided operations, GPU region kinds), so
// HwNode/HwEnv paths that depend on a transport's declarations run without
// RDMA hardware. Every call goes to the inner TCP transport
// (transport::TransportWrapper) unless this class or a test's subclass
// overrides it; register_region() refuses undeclared kinds and
// registers declared ones with TCP as host memory (the tests' "GPU" memory
// is host memory, or is never moved). register_wrapped_tcp() puts such a
// transport in the registry under its own name.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transports/transport.hpp"
#include "transports/transport_wrapper.hpp"

namespace sluice::hw {

class WrappedTcpTransport : public transport::TransportWrapper {
 public:
  WrappedTcpTransport(std::unique_ptr<transport::Transport> tcp, std::string_view name, transport::Capabilities caps)
      : TransportWrapper(std::move(tcp)), name_(name), caps_(std::move(caps)) {}
  std::string_view name() const override { return name_; }
  const transport::Capabilities& capabilities() const override { return caps_; }
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, transport::RegionKind kind) override {
    if (!caps_.reaches(kind)) return error(StatusCode::unavailable, "region kind not declared");
    return inner().register_region(key, bytes, transport::RegionKind::host);
  }

 private:
  std::string name_;
  transport::Capabilities caps_;
};

// Registers transport `name`: its declaration is `declare(tcp's)`, its
// objects `make(a new tcp transport)`, its loopback rails tcp's. Returns true
// (to initialise a static). `declare` is called for the registry's listing
// and may be called again by `make`.
inline bool register_wrapped_tcp(
    std::string name, std::function<transport::Capabilities(transport::Capabilities tcp)> declare,
    std::function<std::unique_ptr<transport::Transport>(std::unique_ptr<transport::Transport> tcp)> make) {
  return transport::register_transport(transport::TransportEntry{
      std::move(name), [] { return ok_status(); },
      [declare] {
        for (const auto& l : transport::list_transports()) {
          if (l.name == "tcp") return declare(l.capabilities);
        }
        return transport::Capabilities{};
      },
      [make](const transport::TransportConfig& config) -> Result<std::unique_ptr<transport::Transport>> {
        Result<std::unique_ptr<transport::Transport>> tcp = transport::create_transport("tcp", config);
        if (!tcp.ok()) return tcp.status();
        return make(std::move(tcp).value());
      },
      [](std::uint32_t rails) {
        Result<std::vector<std::string>> r = transport::loopback_rail_addresses("tcp", rails);
        return r.ok() ? *r : std::vector<std::string>{};
      }});
}

}  // namespace sluice::hw
