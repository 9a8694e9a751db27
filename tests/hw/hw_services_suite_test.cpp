// The shared services suite (tests/core/services/fs_shared_suite.hpp) on
// HwEnv: the scenarios test_services runs on TestEnv and test_sim on SimEnv,
// here with every service on its own thread, loopback TCP between nodes and
// chunks in real files (hw_suite_world.hpp).
#include "tests/core/services/fs_shared_suite.hpp"
#include "tests/hw/hw_suite_world.hpp"

namespace sluice::testing::shared_suite {

struct HwEnvName {
  template <typename T>
  static std::string GetName(int) {
    return "HwEnv";
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(HwEnv, ServicesSuite, ::testing::Types<HwEnvKind>, HwEnvName);

}  // namespace sluice::testing::shared_suite
