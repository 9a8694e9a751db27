#include "tests/bench/sim_raw_peer.hpp"

#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sluice::bench {
namespace {

namespace sg = simgrid::s4u;

struct Request {
  std::uint32_t client = 0;
  std::uint32_t chunk = 0;
};
struct Reply {
  std::uint32_t chunk = 0;
};

}  // namespace

RunResult run_raw_s4u(const ReadBenchSpec& spec) {
  RunResult result;
  xbt_log_control_set("root.thresh:warning");
  // The engine stays until the process exits (it runs in a child process).
  auto& engine = *new sg::Engine("raw-s4u");
  sg::Engine::set_config("network/model:CM02");
  sg::Engine::set_config("network/crosstraffic:0");
  const auto build_start = std::chrono::steady_clock::now();
  sg::NetZone* star = sg::create_star_zone("star");
  std::vector<sg::Host*> servers;
  std::vector<sg::Host*> clients;
  std::vector<sg::Disk*> disks;
  auto add_host = [&](const std::string& name) {
    sg::Host* h = star->create_host(name, 1e9);
    sg::SplitDuplexLink* link = star->create_split_duplex_link(name + "-link", spec.link_bytes_per_s);
    link->set_latency(spec.link_latency_s);
    link->seal();
    star->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg::LinkInRoute::Direction::UP}}, true);
    return h;
  };
  for (std::uint32_t s = 0; s < spec.servers; ++s) {
    servers.push_back(add_host("server" + std::to_string(s)));
    disks.push_back(servers.back()->create_disk("disk" + std::to_string(s), spec.disk_read_bytes_per_s,
                                                spec.disk_write_bytes_per_s));
    disks.back()->seal();
  }
  for (std::uint32_t c = 0; c < spec.clients; ++c) clients.push_back(add_host("client" + std::to_string(c)));
  star->seal();
  result.build_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();

  double last_done_s = 0;
  std::uint64_t chunks = 0;
  // Mailboxes looked up once (by_name builds and hashes a string).
  std::vector<sg::Mailbox*> server_boxes;
  std::vector<sg::Mailbox*> client_boxes;
  for (std::uint32_t s = 0; s < spec.servers; ++s)
    server_boxes.push_back(sg::Mailbox::by_name("server" + std::to_string(s)));
  for (std::uint32_t c = 0; c < spec.clients; ++c)
    client_boxes.push_back(sg::Mailbox::by_name("client" + std::to_string(c)));
  for (std::uint32_t c = 0; c < spec.clients; ++c) {
    sg::Actor::create("client" + std::to_string(c), clients[c],
                      [&spec, &last_done_s, &chunks, &server_boxes, c, mine = client_boxes[c]] {
                        // A permanent receiver: replies flow as soon as a worker sends them, in
                        // parallel, as the transfers of a real client (and of SimEnv) do; without
                        // it each reply would wait for the client's next get().
                        mine->set_receiver(sg::Actor::self());
                        std::uint32_t issued = 0;
                        auto issue = [&] {
                          const std::uint32_t k = issued++;
                          const std::uint32_t server = (c + k) % spec.servers;
                          server_boxes[server]->put_init(new Request{c, k}, spec.request_bytes)->detach();
                        };
                        for (std::uint32_t w = 0; w < spec.window && issued < spec.chunks_per_client; ++w) issue();
                        for (std::uint32_t received = 0; received < spec.chunks_per_client; ++received) {
                          delete mine->get<Reply>();
                          ++chunks;
                          if (issued < spec.chunks_per_client) issue();
                        }
                        last_done_s = std::max(last_done_s, sg::Engine::get_clock());
                      });
  }
  const std::uint32_t workers = spec.server_queue_depth;
  for (std::uint32_t s = 0; s < spec.servers; ++s) {
    for (std::uint32_t w = 0; w < workers; ++w) {
      sg::Actor::create("worker" + std::to_string(s) + "." + std::to_string(w), servers[s],
                        [&spec, &client_boxes, inbox = server_boxes[s], disk = disks[s]] {
                          for (;;) {
                            Request* r = inbox->get<Request>();
                            disk->read(spec.chunk_bytes);
                            client_boxes[r->client]->put(new Reply{r->chunk}, spec.chunk_bytes);
                            delete r;
                          }
                        })
          ->daemonize();
    }
  }
  const auto run_start = std::chrono::steady_clock::now();
  engine.run();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  result.simulated_s = last_done_s;
  result.chunks = chunks;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  result.peak_rss_kib = usage.ru_maxrss;
  return result;
}

}  // namespace sluice::bench
