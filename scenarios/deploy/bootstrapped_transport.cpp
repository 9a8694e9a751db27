#include "scenarios/deploy/bootstrapped_transport.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <mutex>

namespace sluice::emulate {
namespace {

thread_local TransportTable* t_table = nullptr;

// Stands for a node hosted by another process: nothing but its address.
class PlaceholderTransport final : public transport::Transport {
 public:
  PlaceholderTransport(NodeId node, transport::PeerAddress address)
      : node_(node), address_(std::move(address)), fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    caps_.region_kinds = {transport::RegionKind::host};
  }
  ~PlaceholderTransport() override {
    if (fd_ >= 0) ::close(fd_);
  }

  std::string_view name() const override { return k_bootstrapped_transport; }
  const transport::Capabilities& capabilities() const override { return caps_; }
  transport::PeerAddress listen_address() const override { return address_; }
  Result<transport::PeerId> connect(const transport::PeerAddress&) override { return remote(); }
  Status disconnect(transport::PeerId) override { return remote(); }
  Status register_region(std::uint64_t, std::span<std::byte>, transport::RegionKind) override { return remote(); }
  Status deregister_region(std::uint64_t) override { return remote(); }
  Status send_message(transport::PeerId, std::uint64_t, std::vector<std::byte>) override { return remote(); }
  Status put(const transport::BulkRequest&) override { return remote(); }
  Status get(const transport::BulkRequest&) override { return remote(); }
  std::size_t poll(std::vector<transport::TransportEvent>&, std::size_t) override { return 0; }
  int completion_fd() const override { return fd_; }

 private:
  Status remote() const {
    return error(StatusCode::unavailable, "node " + std::to_string(node_) + " runs in another process");
  }
  NodeId node_;
  transport::PeerAddress address_;
  int fd_;
  transport::Capabilities caps_;
};

Result<std::unique_ptr<transport::Transport>> create(const transport::TransportConfig& config) {
  const std::string where = std::string(k_bootstrapped_transport) + " node " + std::to_string(config.local_id);
  if (t_table == nullptr) {
    return error(StatusCode::unavailable, where + ": no bootstrap table on this thread (only node processes use it)");
  }
  const auto node = static_cast<NodeId>(config.local_id);
  if (node == t_table->local_node) {
    if (!t_table->local) return error(StatusCode::already_exists, where + ": the local transport was taken already");
    return std::move(t_table->local);
  }
  auto it = t_table->addresses.find(node);
  if (it == t_table->addresses.end()) return error(StatusCode::not_found, where + ": not in the bootstrap table");
  return std::unique_ptr<transport::Transport>(std::make_unique<PlaceholderTransport>(node, it->second));
}

}  // namespace

void register_bootstrapped_transport() {
  static std::once_flag once;
  std::call_once(once, [] {
    transport::register_transport(transport::TransportEntry{
        std::string(k_bootstrapped_transport), [] { return ok_status(); },
        [] {
          transport::Capabilities c;
          c.region_kinds = {transport::RegionKind::host};
          return c;
        },
        create, [](std::uint32_t rails) { return std::vector<std::string>(rails, "bootstrapped"); }});
  });
}

TransportTableScope::TransportTableScope(TransportTable& table) : previous_(t_table) { t_table = &table; }
TransportTableScope::~TransportTableScope() { t_table = previous_; }

}  // namespace sluice::emulate
