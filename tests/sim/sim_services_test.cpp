// The shared services suite (tests/core/services/fs_shared_suite.hpp) on
// SimEnv: the same scenarios test_services runs on TestEnv.
#include "tests/core/services/fs_shared_suite.hpp"
#include "tests/sim/sim_world.hpp"

namespace sluice::testing::shared_suite {

struct SimEnvName {
  template <typename T>
  static std::string GetName(int) {
    return "SimEnv";
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(SimEnv, ServicesSuite, ::testing::Types<SimEnvKind>, SimEnvName);

}  // namespace sluice::testing::shared_suite
