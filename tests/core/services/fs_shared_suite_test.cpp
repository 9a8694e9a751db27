// The shared services suite (fs_shared_suite.hpp) on TestEnv; test_sim runs
// the same suite on SimEnv.
#include "tests/core/services/fs_shared_suite.hpp"

namespace sluice::testing::shared_suite {

struct TestEnvName {
  template <typename T>
  static std::string GetName(int) {
    return "TestEnv";
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(TestEnv, ServicesSuite, ::testing::Types<TestEnvKind>, TestEnvName);

}  // namespace sluice::testing::shared_suite
