// A peer the transport loses before HwNode has filed it (issue 18, found by
// the R2 soak): a connect to a node whose process was killed is refused at
// once, and its PeerDown can reach HwNode's dispatcher before peer_for files
// the new peer. The dead peer then stayed filed for good and every later
// message to that node failed with "no live peer", also after the node's
// process was back. Here a test transport ("tcp_refusing_test", TCP
// underneath) makes that order certain: while refusing, its connect() goes to
// a port nothing listens on and returns only once HwNode has polled the
// PeerDown. Each send must then try a new connection (the message itself is
// lost, as on a network, and counted), and once the node is reachable again a
// message gets through.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "hw/hw_world.hpp"
#include "tests/hw_backends/wrapped_tcp_transport.hpp"

namespace sluice::hw {
namespace {

constexpr std::string_view k_refusing = "tcp_refusing_test";
constexpr auto k_wait = std::chrono::seconds(5);  // bound on one wait: a hang becomes a failure

struct RefusingState {
  std::atomic<bool> refuse{false};
  std::atomic<int> connects{0};
  std::mutex mu;
  std::condition_variable cv;
  std::set<transport::PeerId> polled_down;  // PeerDown events HwNode has taken
};
RefusingState& refusing() {
  static RefusingState s;
  return s;
}

class RefusingTcpTransport final : public WrappedTcpTransport {
 public:
  RefusingTcpTransport(std::unique_ptr<transport::Transport> tcp, transport::Capabilities caps)
      : WrappedTcpTransport(std::move(tcp), k_refusing, std::move(caps)) {}

  Result<transport::PeerId> connect(const transport::PeerAddress& remote) override {
    ++refusing().connects;
    if (!refusing().refuse) return WrappedTcpTransport::connect(remote);
    transport::PeerAddress closed;
    for (std::size_t rail = 0; rail < remote.rails.size(); ++rail)
      closed.rails.emplace_back("127.0.0.1:1");  // nothing listens there
    Result<transport::PeerId> id = WrappedTcpTransport::connect(closed);
    if (!id.ok()) return id;
    std::unique_lock lock(refusing().mu);
    refusing().cv.wait_for(lock, k_wait, [&] { return refusing().polled_down.count(*id) > 0; });
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the dispatcher has handled it
    return id;
  }

  std::size_t poll(std::vector<transport::TransportEvent>& out, std::size_t max_events) override {
    const std::size_t before = out.size();
    const std::size_t n = WrappedTcpTransport::poll(out, max_events);
    for (std::size_t i = before; i < out.size(); ++i) {
      if (const auto* down = std::get_if<transport::PeerDown>(&out[i])) {
        std::lock_guard lock(refusing().mu);
        refusing().polled_down.insert(down->peer);
        refusing().cv.notify_all();
      }
    }
    return n;
  }
};

const bool k_registered = register_wrapped_tcp(
    std::string(k_refusing), [](transport::Capabilities tcp) { return tcp; },
    [](std::unique_ptr<transport::Transport> tcp) -> std::unique_ptr<transport::Transport> {
      transport::Capabilities caps = tcp->capabilities();
      return std::make_unique<RefusingTcpTransport>(std::move(tcp), std::move(caps));
    });

// Takes what is sent to it.
class Sink final : public Service {
 public:
  explicit Sink(Env& env) : env_(env) {}
  void start() override {}
  void on_event(Event& event) override {
    if (std::holds_alternative<Delivery>(event)) ++received;
  }
  std::string name() const override { return "sink"; }
  Env& env() { return env_; }
  std::atomic<int> received{0};

 private:
  Env& env_;
};

TEST(HwPeerLostEarly, APeerLostBeforeItWasFiledIsConnectedAfreshOnTheNextMessage) {
  ASSERT_TRUE(k_registered);
  const std::string root = ::testing::TempDir() + "sluice-peer-lost-early";
  HwWorldConfig config;
  config.transport = std::string(k_refusing);
  config.storage_root = root;
  config.node_memory_limit_bytes = 64ULL << 20;
  HwWorld world(config);
  Sink& from = world.add_service<Sink>(0);
  Sink& to = world.add_service<Sink>(1);
  ASSERT_TRUE(world.start().ok());
  const Endpoint target = world.endpoint_of(to);
  const auto send = [&] {
    return world.call(from, [&] { return from.env().send(target, proto::Heartbeat{world.endpoint_of(from), 1, {}}); });
  };
  refusing().connects = 0;
  refusing().refuse = true;
  // Lost as on a network (Env's contract): the sender's retries deal with it; counted.
  EXPECT_TRUE(send().ok());
  EXPECT_TRUE(send().ok());
  EXPECT_EQ(refusing().connects.load(), 2) << "the second message went to the first, dead peer";
  EXPECT_EQ(world.counter(k_metric_messages_undeliverable), 2);
  refusing().refuse = false;
  EXPECT_TRUE(send().ok());
  const auto deadline = std::chrono::steady_clock::now() + k_wait;
  while (to.received.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(to.received.load(), 1);
  world.stop();
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

}  // namespace
}  // namespace sluice::hw
