// The "tcp+shm" transport: shared memory to the processes of this host, tcp
// to every other. It is for node processes of a multi-process deployment
// (`sluice run --backend cluster --transport tcp+shm`, several ranks per
// host under mpirun/srun): two nodes on one host move their control frames
// and bulk bytes through the shm transport (transports/shm), the rest
// through tcp (transports/tcp), and the caller sees one transport.
//
// How it meets transports/transport.hpp:
// - It holds one tcp and one shm transport with the same config: rails,
//   connections per rail, limits, grants, log (their lines name themselves). rail_addresses are tcp's syntax
//   ("a.b.c.d:port"); the shm rails are "shm:auto" (free abstract names), or given back in this transport's own address
//   syntax (a process started again listens where its peers already connect).
// - An address, one per rail: "TCP;SHM;host=KEY", e.g.
//   "10.0.0.2:40123;shm:sluice-51-3;host=9f0c...:4026531840:0". KEY names
//   where a shm connection can reach: the boot id (/proc/sys/kernel/random/
//   boot_id), the network namespace (abstract Unix sockets live in one) and
//   the user id (shm copies need ptrace access: same user). connect() takes
//   shm when the peer's KEY equals this process's and tcp otherwise, and
//   logs which ("peer P (rails ...) via shm"). A plain tcp address (a peer
//   that runs tcp alone) is reached through tcp.
// - PeerIds: the sub-transports' own, from disjoint ranges
//   (TransportConfig::first_peer_id: shm's from 2^62), so an id says which
//   side serves it and events and errors pass through unchanged.
// - Regions are registered with both (either may serve an access); a grant
//   (remote_access) is recorded with both; the answer is tcp's (both are
//   stream transports: address and rkey 0).
// - poll() takes the events of both, alternating which goes first;
//   completion_fd() is an epoll fd that is readable while either's is.
// - Capabilities: what both declare (host memory, stream, the smaller
//   limits).
// - Authentication: tcp connections prove the shared secret
//   (TransportConfig::shared_secret) as always. The shm transport cannot
//   (it refuses a secret); its peers are instead vouched for by the kernel:
//   only a process of the same user on the same host and namespace can pass
//   its hand-shake (abstract socket, SO_PEERCRED, and the ptrace-access
//   probe), and such a process can read this one's memory, the secret
//   included, anyway.
// - TransportConfig::netns: given, there is no shm side (every peer via tcp,
//   said in the log): the shm transport refuses a namespace.
#pragma once

#include <memory>

#include "transports/transport.hpp"

namespace sluice::transport::host_routed {

inline constexpr std::string_view k_host_routed_name = "tcp+shm";

Capabilities host_routed_capabilities();

// This process's KEY (see the top): "BOOTID:NETNS_INODE:UID".
std::string host_key();

// Creates both transports (tcp's config checks first; a secret is kept for tcp only).
Result<std::unique_ptr<Transport>> make_host_routed_transport(const TransportConfig& config);

}  // namespace sluice::transport::host_routed
