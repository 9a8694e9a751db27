// transport::TransportWrapper: every call of the Transport contract reaches
// the wrapped transport with its arguments, and its answer comes back
// unchanged (the contract's own default, remote_access, included); a subclass overrides only what it changes.
#include "transports/transport_wrapper.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice::transport {
namespace {

// Answers each call with something recognisable and records its name.
class ScriptedTransport final : public Transport {
 public:
  ScriptedTransport() { caps_.max_rails = 3; }
  std::vector<std::string>& calls() { return calls_; }

  std::string_view name() const override { return "scripted"; }
  const Capabilities& capabilities() const override { return caps_; }
  PeerAddress listen_address() const override { return PeerAddress{{"here:1"}}; }
  Result<PeerId> connect(const PeerAddress& remote) override {
    calls_.push_back("connect " + remote.rails.at(0));
    return PeerId{41};
  }
  Status disconnect(PeerId peer) override { return record("disconnect", peer); }
  Status register_region(std::uint64_t key, std::span<std::byte> bytes, RegionKind kind) override {
    calls_.push_back("register_region " + std::to_string(key) + " " + std::to_string(bytes.size()) + " " +
                     std::string(to_string(kind)));
    return ok_status();
  }
  Status deregister_region(std::uint64_t key) override { return record("deregister_region", key); }
  Result<RemoteRegionAccess> remote_access(std::uint64_t key, std::uint32_t rail, std::uint64_t grantee_id) override {
    calls_.push_back("remote_access " + std::to_string(key) + " " + std::to_string(rail) + " " +
                     std::to_string(grantee_id));
    return RemoteRegionAccess{0x1000, 77, 4096};
  }
  Status send_message(PeerId peer, std::uint64_t tag, std::vector<std::byte> frame) override {
    calls_.push_back("send_message " + std::to_string(peer) + " " + std::to_string(tag) + " " +
                     std::to_string(frame.size()));
    return error(StatusCode::again, "queue full");
  }
  Status put(const BulkRequest& request) override { return record("put", request.cookie); }
  Status get(const BulkRequest& request) override { return record("get", request.cookie); }
  std::size_t poll(std::vector<TransportEvent>& out, std::size_t max_events) override {
    calls_.push_back("poll " + std::to_string(max_events));
    out.push_back(OpDone{5, ok_status(), 64});
    return 1;
  }
  int completion_fd() const override { return 123; }

 private:
  Status record(const std::string& call, std::uint64_t arg) {
    calls_.push_back(call + " " + std::to_string(arg));
    return ok_status();
  }
  Capabilities caps_;
  std::vector<std::string> calls_;
};

TEST(TransportWrapper, ForwardsEveryCallAndItsAnswer) {
  auto inner = std::make_unique<ScriptedTransport>();
  ScriptedTransport& seen = *inner;
  TransportWrapper w(std::move(inner));
  std::vector<std::byte> bytes(16);

  EXPECT_EQ(w.name(), "scripted");
  EXPECT_EQ(w.capabilities().max_rails, 3u);
  EXPECT_EQ(&w.capabilities(), &seen.capabilities());
  EXPECT_EQ(w.listen_address().rails, std::vector<std::string>{"here:1"});
  EXPECT_EQ(w.completion_fd(), 123);
  EXPECT_EQ(*w.connect(PeerAddress{{"there:2"}}), 41u);
  EXPECT_TRUE(w.disconnect(41).ok());
  EXPECT_TRUE(w.register_region(1, bytes, RegionKind::cuda).ok());
  Result<RemoteRegionAccess> access = w.remote_access(1, 2, 3);
  ASSERT_TRUE(access.ok()) << access.status().to_string();
  EXPECT_EQ(access->rkey, 77u);
  EXPECT_EQ(w.send_message(41, 6, std::vector<std::byte>(10)).code(), StatusCode::again);
  BulkRequest request;
  request.cookie = 11;
  EXPECT_TRUE(w.put(request).ok());
  request.cookie = 12;
  EXPECT_TRUE(w.get(request).ok());
  std::vector<TransportEvent> events;
  EXPECT_EQ(w.poll(events, 8), 1u);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(std::get<OpDone>(events[0]).cookie, 5u);
  EXPECT_TRUE(w.deregister_region(1).ok());

  EXPECT_EQ(seen.calls(), (std::vector<std::string>{"connect there:2", "disconnect 41", "register_region 1 16 cuda",
                                                    "remote_access 1 2 3", "send_message 41 6 10", "put 11", "get 12",
                                                    "poll 8", "deregister_region 1"}));
}

// Overrides two calls; the others still reach the inner transport.
class Renamed final : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  std::string_view name() const override { return "renamed"; }
  Status put(const BulkRequest&) override { return error(StatusCode::unavailable, "no puts here"); }
};

TEST(TransportWrapper, ASubclassChangesOnlyWhatItOverrides) {
  auto inner = std::make_unique<ScriptedTransport>();
  ScriptedTransport& seen = *inner;
  Renamed w(std::move(inner));
  EXPECT_EQ(w.name(), "renamed");
  BulkRequest request;
  request.cookie = 3;
  EXPECT_EQ(w.put(request).code(), StatusCode::unavailable);
  EXPECT_TRUE(w.get(request).ok());
  EXPECT_EQ(w.completion_fd(), 123);
  EXPECT_EQ(seen.calls(), std::vector<std::string>{"get 3"});
}

}  // namespace
}  // namespace sluice::transport
