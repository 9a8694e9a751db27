#include "hw/hw_world.hpp"

#include <sys/random.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include "core/common/assert.hpp"
#include "core/common/rng.hpp"
#include "core/namespace/name_hash.hpp"

namespace sluice::hw {

static_assert(World<HwWorld>, "HwWorld keeps the World contract (core/world.hpp)");

namespace {

// The salt of the region keys (HwWorldConfig::region_key_salt): given, else
// from the secret (FNV-1a over a domain tag and the secret, then mixed), else random.
std::uint64_t region_key_salt_of(const HwWorldConfig& config) {
  if (config.region_key_salt != 0) return config.region_key_salt;
  if (!config.shared_secret.empty()) {
    std::uint64_t h = fnv_1a_64("sluice-region-keys-v1|" + config.shared_secret);
    return splitmix64(h);
  }
  std::uint64_t salt = 0;
  while (salt == 0) {
    if (::getrandom(&salt, sizeof salt, 0) != static_cast<ssize_t>(sizeof salt)) {
      salt = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
      salt = splitmix64(salt);
    }
  }
  return salt;
}

}  // namespace

HwWorld::HwWorld(HwWorldConfig config)
    : config_(std::move(config)),
      epoch_(ServiceLoop::Clock::now()),
      root_rng_(config_.seed),
      region_key_salt_(region_key_salt_of(config_)) {}

std::uint64_t HwWorld::region_wire_key(NodeId owner, std::uint32_t region) const {
  // A bijection of (owner, region) for a given salt: xor, then splitmix64's
  // finaliser (invertible), so keys of one world never collide.
  std::uint64_t z = ((static_cast<std::uint64_t>(owner) << 32) | region) ^ region_key_salt_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

HwWorld::~HwWorld() { stop(); }

HwNode& HwWorld::node_for(NodeId id) {
  auto it = nodes_.find(id);
  if (it != nodes_.end()) return *it->second;
  auto node = std::make_unique<HwNode>(*this, id);
  Status opened = node->open();
  // A node that appears after start() (a client added later) comes up at once.
  if (opened.ok() && started_ && !stopped_) node->start();
  if (!opened.ok() && started_) log("hw world: node " + std::to_string(id) + " could not open: " + opened.to_string());
  node_open_[id] = opened;
  return *nodes_.emplace(id, std::move(node)).first->second;
}

HwWorld::Entry HwWorld::new_entry(NodeId node, Endpoint& ep) {
  std::unique_lock lock(topology_mu_);
  HwNode& n = node_for(node);
  ep = Endpoint{node, next_service_index_++};
  Entry e;
  e.loop = std::make_unique<ServiceLoop>(epoch_, &progress_, &gate_);
  e.env = std::make_unique<HwEnv>(*this, n, *e.loop, ep, root_rng_.fork((std::uint64_t{node} << 32) | ep.service));
  e.loop->set_turn_end([env = e.env.get()] { env->flush_outbox(); });
  return e;
}

void HwWorld::insert_entry(Endpoint ep, Entry e) {
  ServiceLoop* loop = e.loop.get();
  {
    std::unique_lock lock(topology_mu_);
    entries_.emplace(ep, std::move(e));
  }
  if (started_ && !stopped_) loop->start();
}

Status HwWorld::add_target(TargetId target, NodeId node) {
  if (started_) return error(StatusCode::invalid_argument, "hw world: add targets before start()");
  if (config_.storage_root.empty()) {
    return error(StatusCode::invalid_argument, "hw world: storage_root is empty; targets need a directory");
  }
  std::unique_lock lock(topology_mu_);
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
  std::shared_lock lock(topology_mu_);
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
  const Endpoint ep = endpoint_of(service);
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(ep);
  if (it != entries_.end()) it->second.deferred = true;
}

void HwWorld::start_service(const Service& service) {
  const Endpoint ep = endpoint_of(service);
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(ep);
  if (it == entries_.end() || !started_ || stopped_) return;
  it->second.deferred = false;
  it->second.loop->start();
}

void HwWorld::stop() {
  if (stopped_) return;
  stopped_ = true;
  shutting_down_.store(true);
  std::shared_lock lock(topology_mu_);
  // Services first (no new operations), then the nodes' dispatchers and transports.
  for (auto& [ep, e] : entries_) e.loop->stop();
  for (auto& [id, node] : nodes_) node->stop();
}

void HwWorld::kill_node(NodeId node) {
  std::shared_lock lock(topology_mu_);
  for (auto& [ep, e] : entries_) {
    if (ep.node == node) e.loop->stop();
  }
  auto it = nodes_.find(node);
  if (it != nodes_.end()) it->second->stop();
  lock.unlock();
  log("hw world: node " + std::to_string(node) + " killed");
}

void HwWorld::kill(Endpoint service) {
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(service);
  if (it == entries_.end()) return;
  it->second.loop->kill(it->second.env->next_op_id());
  lock.unlock();
  log("hw world: service " + service.to_string() + " killed");
}

void HwWorld::revive(Endpoint service) {
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(service);
  if (it == entries_.end()) return;
  it->second.loop->revive();
  lock.unlock();
  log("hw world: service " + service.to_string() + " revived");
}

Status HwWorld::restart(Endpoint service) {
  ServiceLoop* loop = nullptr;
  HwEnv* env = nullptr;
  ServiceFactory factory;
  {
    std::shared_lock lock(topology_mu_);
    auto it = entries_.find(service);
    if (it == entries_.end()) return error(StatusCode::not_found, "hw world: no service " + service.to_string());
    if (!it->second.factory) {
      return error(StatusCode::unavailable,
                   "hw world: service " + service.to_string() + " was built from arguments that cannot be copied");
    }
    loop = it->second.loop.get();
    env = it->second.env.get();
    factory = it->second.factory;
  }
  loop->kill(env->next_op_id());
  // A crash closes what its process held: the dead instance lets go of it
  // (Service::crashed) on its loop thread, between items, before the fresh
  // one opens it (a RocksDB store's lock: the restart failed on it).
  Service* old = nullptr;
  {
    std::shared_lock lock(topology_mu_);
    old = entries_.at(service).service.get();
  }
  call(*old, [old] { old->crashed(); });
  std::unique_ptr<Service> fresh = factory(*env);
  Service* raw = fresh.get();
  // Swap on the loop thread, between items: the old instance may be in a handler now.
  auto swapped = std::make_shared<std::promise<void>>();
  std::future<void> done = swapped->get_future();
  loop->run([loop, raw, swapped] {
    loop->bind(raw);
    swapped->set_value();
  });
  done.wait();
  {
    std::unique_lock lock(topology_mu_);
    Entry& e = entries_.at(service);
    e.retired.push_back(std::move(e.service));
    e.service = std::move(fresh);
  }
  loop->revive();
  if (loop->running()) loop->run([raw] { raw->start(); });
  log("hw world: service " + service.to_string() + " restarted as a fresh instance");
  return ok_status();
}

bool HwWorld::alive(Endpoint service) const {
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(service);
  return it != entries_.end() && it->second.loop->alive();
}

Endpoint HwWorld::endpoint_of(const Service& service) const {
  std::shared_lock lock(topology_mu_);
  for (const auto& [ep, e] : entries_) {
    if (e.service.get() == &service) return ep;
  }
  return {};
}

Env& HwWorld::env_of(const Service& service) {
  std::shared_lock lock(topology_mu_);
  for (auto& [ep, e] : entries_) {
    if (e.service.get() == &service) return *e.env;
  }
  SLUICE_ASSERT_MSG(false, "env_of: " + service.name() + " is not a service of this world");
  std::abort();  // not reached
}

void HwWorld::set_message_hook(MessageHook hook) {
  SLUICE_ASSERT_MSG(!started_, "a hardware world's hooks are set before start()");
  config_.message_hook = std::move(hook);
}

void HwWorld::set_transfer_hook(TransferHook hook) {
  SLUICE_ASSERT_MSG(!started_, "a hardware world's hooks are set before start()");
  config_.transfer_hook = std::move(hook);
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

bool HwWorld::run_until(const std::function<bool()>& done, std::uint64_t max_events, TimeNs max_wait_ns) {
  if (!start().ok()) return false;
  constexpr auto k_round = std::chrono::milliseconds(100);
  const TimeNs deadline = now() + max_wait_ns;
  const std::uint64_t first = progress_.generation();
  std::uint64_t seen = first;
  while (true) {
    const TimeNs checked_ns = now();
    bool met = false;
    gate_.exclusive([&] { met = done(); });
    if (met) return true;
    if (seen - first >= max_events || now() >= deadline) return false;
    seen = progress_.wait_past(seen, k_round);
    // Rate limit: each look holds every loop (see k_min_check_interval_ns).
    const TimeNs next_ns = checked_ns + k_min_check_interval_ns;
    if (now() < next_ns) std::this_thread::sleep_for(std::chrono::nanoseconds(next_ns - now()));
  }
}

void HwWorld::run_for(TimeNs duration_ns) {
  if (!start().ok()) return;
  // Time is real here: waiting is what running for a while means.
  if (duration_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(duration_ns));
}

std::uint64_t HwWorld::run_until_idle(std::uint64_t max_events, TimeNs max_wait_ns) {
  const std::uint64_t first = progress_.generation();
  run_until([this] { return idle_between_events(); }, max_events, max_wait_ns);
  return progress_.generation() - first;
}

bool HwWorld::idle() {
  bool quiet = false;
  gate_.exclusive([&] { quiet = idle_between_events(); });
  return quiet;
}

bool HwWorld::idle_between_events() const {
  // Counters before queues: a message or completion is pushed to its loop
  // before its count drops, so one of the two looks sees it.
  if (in_flight_messages_.load() > 0) return false;
  std::shared_lock lock(topology_mu_);
  for (const auto& [id, node] : nodes_) {
    if (node->in_flight_ops() > 0) return false;
  }
  for (const auto& [ep, e] : entries_) {
    if (!e.loop->idle()) return false;
  }
  return true;
}

TimeNs HwWorld::transfer_delay(const Endpoint& self, const TransferSpec& spec) const {
  return config_.transfer_hook ? std::max<TimeNs>(config_.transfer_hook(self, spec), 0) : 0;
}

MessageFate HwWorld::message_fate(const Endpoint& from, const Endpoint& to, const proto::Message& m) const {
  return config_.message_hook ? config_.message_hook(from, to, m) : MessageFate{};
}

std::uint64_t HwWorld::messages_dropped() const {
  std::uint64_t dropped = hook_dropped_.load();
  std::shared_lock lock(topology_mu_);
  for (const auto& [ep, e] : entries_) dropped += e.loop->dropped_deliveries();
  return dropped;
}

ServiceLoop* HwWorld::loop_of(Endpoint endpoint) const {
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(endpoint);
  return it == entries_.end() ? nullptr : it->second.loop.get();
}

Result<transport::PeerAddress> HwWorld::address_of(NodeId node) const {
  std::shared_lock lock(topology_mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return error(StatusCode::not_found, "hw world: no node " + std::to_string(node));
  transport::PeerAddress address = it->second->address();
  if (address.rails.empty())
    return error(StatusCode::unavailable, "hw world: node " + std::to_string(node) + " is down");
  return address;
}

HwNode* HwWorld::node(NodeId id) {
  std::shared_lock lock(topology_mu_);
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second.get();
}

NodeId HwWorld::node_of_target(TargetId target) const {
  std::shared_lock lock(topology_mu_);
  auto it = target_nodes_.find(target);
  return it == target_nodes_.end() ? k_no_id : it->second;
}

void HwWorld::log(std::string line) {
  if (config_.log) config_.log(line);
  std::lock_guard lock(log_mu_);
  if (logs_.size() >= k_max_world_log_lines) logs_.erase(logs_.begin(), logs_.begin() + k_max_world_log_lines / 10);
  logs_.push_back(std::move(line));
}

void HwWorld::before_messages_leave(const Service& service, std::function<void(Service&)> fn) {
  SLUICE_ASSERT_MSG(!started_, "a service's before-send hook is set before start()");
  const Endpoint ep = endpoint_of(service);
  std::shared_lock lock(topology_mu_);
  auto it = entries_.find(ep);
  SLUICE_ASSERT_MSG(it != entries_.end(),
                    "before_messages_leave: " + service.name() + " is not a service of this world");
  it->second.env->set_before_send([this, ep, fn = std::move(fn)] {
    Service* now = nullptr;
    {
      std::shared_lock inner(topology_mu_);
      if (auto e = entries_.find(ep); e != entries_.end()) now = e->second.service.get();
    }
    if (now != nullptr) fn(*now);
  });
}

std::map<std::string, double> HwWorld::thread_cpu_ns() const {
  std::shared_lock lock(topology_mu_);
  std::map<std::string, double> by_kind;
  for (const auto& [ep, e] : entries_) {
    const std::string name = e.service != nullptr ? e.service->name() : std::string("unbound");
    by_kind[name.substr(0, name.find(':'))] += static_cast<double>(e.loop->thread_cpu_ns());
  }
  return by_kind;
}

std::vector<std::string> HwWorld::logs() const {
  std::lock_guard lock(log_mu_);
  return logs_;
}

double HwWorld::counter(std::string_view name) const {
  std::shared_lock lock(topology_mu_);
  double sum = 0;
  for (const auto& [ep, e] : entries_) sum += e.env->counter(name);
  return sum;
}

std::vector<double> HwWorld::samples(std::string_view name) const {
  std::shared_lock lock(topology_mu_);
  std::vector<double> all;
  for (const auto& [ep, e] : entries_) {
    std::vector<double> some = e.env->samples(name);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

}  // namespace sluice::hw
