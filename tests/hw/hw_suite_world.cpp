#include "tests/hw/hw_suite_world.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "tests/support/test_cluster_impl.hpp"

namespace sluice::testing {
namespace {

// Chunk files are named by 16 hex digits (hw_backends/chunk_files.hpp, object_path).
constexpr std::size_t k_object_name_chars = 16;

bool is_object_name(const std::string& name) {
  if (name.size() != k_object_name_chars) return false;
  for (char c : name) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

}  // namespace

HwSuiteWorld::HwSuiteWorld(hw::HwWorldConfig config, std::string storage_root)
    : storage_root_(std::move(storage_root)) {
  config.storage_root = storage_root_ + "/targets";
  config.message_hook = rules_.message_hook();
  config.transfer_hook = rules_.transfer_hook();
  world_ = std::make_unique<hw::HwWorld>(std::move(config));
}

HwSuiteWorld::~HwSuiteWorld() {
  world_.reset();  // joins every thread and closes every file first
  std::error_code ec;
  std::filesystem::remove_all(storage_root_, ec);
}

void HwSuiteWorld::add_target(TargetId target, NodeId node) {
  Status s = world_->add_target(target, node);
  EXPECT_TRUE(s.ok()) << s.to_string();
}

std::size_t HwSuiteWorld::object_count(TargetId target) const {
  const NodeId node = world_->node_of_target(target);
  if (node == k_no_id) return 0;
  const std::filesystem::path dir = std::filesystem::path(world_->config().storage_root) /
                                    ("node" + std::to_string(node)) / ("target" + std::to_string(target));
  std::size_t count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_object_name(entry.path().filename().string())) ++count;
  }
  return count;
}

void HwSuiteWorld::start() {
  Status s = world_->start();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

std::uint64_t HwSuiteWorld::run_until_idle(std::uint64_t max_events) {
  return world_->run_until_idle(max_events, k_max_run_wall_ns);
}

bool HwSuiteWorld::run_until(const std::function<bool()>& done, std::uint64_t max_events) {
  return world_->run_until(done, max_events, k_max_run_wall_ns);
}

void HwSuiteWorld::run_for(TimeNs duration_ns) {
  start();
  world_->run_for(duration_ns);
  world_->run_until_idle(50'000'000, k_max_run_wall_ns);
}

const Distribution* HwSuiteWorld::samples(std::string_view name) const {
  std::vector<double> values = world_->samples(name);
  if (values.empty()) return nullptr;
  std::lock_guard lock(samples_mu_);
  Distribution& d = samples_[std::string(name)];
  d.values = std::move(values);
  return &d;
}

template <>
std::unique_ptr<HwSuiteWorld> make_cluster_world<HwSuiteWorld>(const TestClusterSpec& spec) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/sluice-hwsuite-XXXXXX";
  const char* root = ::mkdtemp(templ.data());
  EXPECT_NE(root, nullptr) << "mkdtemp " << templ << " failed";
  hw::HwWorldConfig config;
  config.seed = spec.world.seed;
  // SLUICE_TEST_HW_TRANSPORT runs the suite over another transport (ctest
  // hw_env.services_ucx: the UCX transport, issue 51); tcp otherwise.
  const char* transport = std::getenv("SLUICE_TEST_HW_TRANSPORT");
  config.transport = transport != nullptr && *transport != '\0' ? transport : "tcp";
  config.storage_backend = "posix";
  config.node_memory_limit_bytes = spec.world.node_memory_limit_bytes;
  return std::make_unique<HwSuiteWorld>(std::move(config), root != nullptr ? std::string(root) : templ);
}

template class BasicTestCluster<HwSuiteWorld>;

}  // namespace sluice::testing
