// TransportWrapper: a Transport that forwards every call to the transport
// it wraps (RocksDB's FileSystemWrapper/EnvWrapper). A transport that
// changes a few behaviours of another one (declares other capabilities,
// checks carried keys, records what it was asked) derives from it and
// overrides only those calls; the rest, the defaults of transport.hpp
// included (remote_access), reach the inner
// transport unchanged. A new Transport call gets its forwarding here once.
//
// Thread-safety, blocking and ownership are the inner transport's
// (transport.hpp). The wrapper owns the inner transport; it is destroyed with
// the wrapper, after the subclass's members.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "transports/transport.hpp"

namespace sluice::transport {

class TransportWrapper : public Transport {
 public:
  // `inner` must not be null.
  explicit TransportWrapper(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  const Capabilities& capabilities() const override { return inner_->capabilities(); }
  PeerAddress listen_address() const override { return inner_->listen_address(); }
  Result<PeerId> connect(const PeerAddress& remote) override { return inner_->connect(remote); }
  Status disconnect(PeerId peer) override { return inner_->disconnect(peer); }
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override {
    return inner_->register_region(key, bytes, kind);
  }
  Status deregister_region(std::uint64_t key) override { return inner_->deregister_region(key); }
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override {
    return inner_->remote_access(key, rail, grantee_id);
  }
  [[nodiscard]] Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override {
    return inner_->send_message(peer, tag, std::move(frame));
  }
  // send_messages is not forwarded: Transport's default sends each frame
  // through send_message, so a subclass that overrides send_message sees
  // every frame (batches lose their gathering through a wrapper).
  [[nodiscard]] Status put(const BulkRequest& request) override { return inner_->put(request); }
  [[nodiscard]] Status get(const BulkRequest& request) override { return inner_->get(request); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override {
    return inner_->poll(out, max_events);
  }
  int completion_fd() const override { return inner_->completion_fd(); }

 protected:
  Transport& inner() { return *inner_; }
  const Transport& inner() const { return *inner_; }

 private:
  std::unique_ptr<Transport> inner_;
};

}  // namespace sluice::transport
