// The "bootstrapped" transport entry: how an HwWorld that hosts the
// services of ONE node of a multi-process deployment reaches the others.
//
// HwWorld (hw/hw_world.hpp) opens one transport per node it knows,
// on loopback, and finds a peer node's address by asking that node's own
// transport. A node process therefore builds its world with every node of the
// cluster, under this registry name, while a TransportTable is installed on
// the building thread:
//   - the process's own node gets the transport made before the world
//     (ClusterConfig::transport: tcp, tcp+shm or ucx, listening on the
//     node's real address; its address went out at bootstrap), handed over
//     as is;
//   - every other node gets a PlaceholderTransport that listens nowhere and
//     reports that node's bootstrapped address as its listen address, so the
//     local node's transport connects to the real peer process.
// Nothing else changes in HwWorld/HwNode: control frames and bulk bytes go
// through the node's real transport only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/common/ids.hpp"
#include "transports/transport.hpp"

namespace sluice::emulate {

inline constexpr std::string_view k_bootstrapped_transport = "bootstrapped";

struct TransportTable {
  NodeId local_node = k_no_id;
  std::unique_ptr<transport::Transport> local;         // taken by the first create for local_node
  std::map<NodeId, transport::PeerAddress> addresses;  // every node, from the bootstrap
};

// Registers k_bootstrapped_transport once per process (idempotent).
void register_bootstrapped_transport();

// Installs `table` for transports created on this thread until the scope
// ends (nests: the previous one comes back).
class TransportTableScope {
 public:
  explicit TransportTableScope(TransportTable& table);
  ~TransportTableScope();
  TransportTableScope(const TransportTableScope&) = delete;
  TransportTableScope& operator=(const TransportTableScope&) = delete;

 private:
  TransportTable* previous_;
};

}  // namespace sluice::emulate
