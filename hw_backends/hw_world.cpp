#include "hw_backends/hw_world.hpp"

#include <sys/stat.h>

#include <cassert>

namespace sluice::hw {

HwWorld::HwWorld(HwWorldConfig config)
    : config_(std::move(config)), epoch_(ServiceLoop::Clock::now()), root_rng_(config_.seed) {}

HwWorld::~HwWorld() { stop(); }

HwNode& HwWorld::node_for(NodeId id) {
  auto it = nodes_.find(id);
  if (it != nodes_.end()) return *it->second;
  auto node = std::make_unique<HwNode>(*this, id);
  node_open_[id] = node->open();
  return *nodes_.emplace(id, std::move(node)).first->second;
}

HwWorld::Entry& HwWorld::new_entry(NodeId node) {
  assert(!started_ && "add services before start()");
  HwNode& n = node_for(node);
  const Endpoint ep{node, next_service_index_++};
  Entry e;
  e.loop = std::make_unique<ServiceLoop>(epoch_, &progress_);
  e.env = std::make_unique<HwEnv>(*this, n, *e.loop, ep, root_rng_.fork((std::uint64_t{node} << 32) | ep.service));
  return entries_.emplace(ep, std::move(e)).first->second;
}

Status HwWorld::add_target(TargetId target, NodeId node) {
  if (started_) return error(StatusCode::invalid_argument, "hw world: add targets before start()");
  if (config_.storage_root.empty()) {
    return error(StatusCode::invalid_argument, "hw world: storage_root is empty; targets need a directory");
  }
  if (target_nodes_.contains(target)) {
    return error(StatusCode::already_exists, "hw world: target " + std::to_string(target) + " exists");
  }
  HwNode& n = node_for(node);
  const std::string node_dir = config_.storage_root + "/node" + std::to_string(node);
  StorageTargetConfig tc;
  tc.directory = node_dir + "/target" + std::to_string(target);
  tc.queue_depth = config_.storage_queue_depth;
  tc.direct_io = config_.direct_io;
  tc.log = [this](std::string_view line) { log(std::string(line)); };
  // The backend creates one directory level; the root and node levels are made here.
  ::mkdir(config_.storage_root.c_str(), 0755);
  ::mkdir(node_dir.c_str(), 0755);
  Status st = n.add_target(target, tc);
  if (st.ok()) target_nodes_[target] = node;
  return st;
}

Status HwWorld::start() {
  if (started_) return ok_status();
  for (const auto& [id, st] : node_open_) {
    if (!st.ok()) return error(st.code(), "hw world: node " + std::to_string(id) + ": " + st.message());
  }
  started_ = true;
  for (auto& [id, node] : nodes_) node->start();
  for (auto& [ep, e] : entries_) {
    if (!e.deferred) e.loop->start();
  }
  log("hw world started: " + std::to_string(nodes_.size()) + " nodes, " + std::to_string(entries_.size()) +
      " services, transport " + config_.transport + ", storage " + config_.storage_backend + ", seed " +
      std::to_string(config_.seed));
  return ok_status();
}

void HwWorld::defer_start(const Service& service) {
  auto it = entries_.find(endpoint_of(service));
  if (it != entries_.end()) it->second.deferred = true;
}

void HwWorld::start_service(const Service& service) {
  auto it = entries_.find(endpoint_of(service));
  if (it == entries_.end() || !started_ || stopped_) return;
  it->second.deferred = false;
  it->second.loop->start();
}

void HwWorld::stop() {
  if (stopped_) return;
  stopped_ = true;
  // Services first (no new operations), then the nodes' dispatchers and transports.
  for (auto& [ep, e] : entries_) e.loop->stop();
  for (auto& [id, node] : nodes_) node->stop();
}

void HwWorld::kill_node(NodeId node) {
  for (auto& [ep, e] : entries_) {
    if (ep.node == node) e.loop->stop();
  }
  auto it = nodes_.find(node);
  if (it != nodes_.end()) it->second->stop();
  log("hw world: node " + std::to_string(node) + " killed");
}

Endpoint HwWorld::endpoint_of(const Service& service) const {
  for (const auto& [ep, e] : entries_) {
    if (e.service.get() == &service) return ep;
  }
  return {};
}

TimeNs HwWorld::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(ServiceLoop::Clock::now() - epoch_).count();
}

bool HwWorld::wait_until(const std::function<bool()>& done, TimeNs max_wait_ns) {
  // Not a sleep: each round waits for some service to handle an event, and
  // is bounded so that a world where nothing happens any more returns.
  constexpr auto k_round = std::chrono::milliseconds(100);
  const TimeNs deadline = now() + max_wait_ns;
  std::uint64_t seen = progress_.generation();
  while (!done()) {
    if (now() >= deadline) return done();
    seen = progress_.wait_past(seen, k_round);
  }
  return true;
}

ServiceLoop* HwWorld::loop_of(Endpoint endpoint) const {
  auto it = entries_.find(endpoint);
  return it == entries_.end() ? nullptr : it->second.loop.get();
}

Result<transport::PeerAddress> HwWorld::address_of(NodeId node) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return error(StatusCode::not_found, "hw world: no node " + std::to_string(node));
  transport::PeerAddress address = it->second->address();
  if (address.rails.empty()) return error(StatusCode::unavailable, "hw world: node " + std::to_string(node) + " is down");
  return address;
}

HwNode* HwWorld::node(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second.get();
}

NodeId HwWorld::node_of_target(TargetId target) const {
  auto it = target_nodes_.find(target);
  return it == target_nodes_.end() ? k_no_id : it->second;
}

void HwWorld::log(std::string line) {
  if (config_.log) config_.log(line);
  std::lock_guard lock(log_mu_);
  if (logs_.size() >= k_max_world_log_lines) logs_.erase(logs_.begin(), logs_.begin() + k_max_world_log_lines / 10);
  logs_.push_back(std::move(line));
}

std::vector<std::string> HwWorld::logs() const {
  std::lock_guard lock(log_mu_);
  return logs_;
}

double HwWorld::counter(std::string_view name) const {
  double sum = 0;
  for (const auto& [ep, e] : entries_) sum += e.env->counter(name);
  return sum;
}

}  // namespace sluice::hw
