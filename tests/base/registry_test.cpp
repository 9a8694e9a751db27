// base::Registry: registration, unique names with a clear refusal, listing
// with probe verdicts, lookups, and probes that run outside the lock (a slow
// probe holds up no lookup; a probe that calls back into the registry does
// not deadlock).
#include "base/registry.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sluice::base {
namespace {

using namespace std::chrono_literals;

struct Widget {
  std::string name;
  std::function<Status()> probe;
  std::function<int()> make;
};

Widget widget(std::string name, int value, std::function<Status()> probe = nullptr) {
  return Widget{std::move(name), std::move(probe), [value] { return value; }};
}

// An object that lives until the process exits: what a thread left behind
// by finishes() may still use.
template <class T, class... Args>
T* kept(Args&&... args) {
  static std::mutex mu;
  static std::vector<std::shared_ptr<void>> objects;
  auto object = std::make_shared<T>(std::forward<Args>(args)...);
  std::lock_guard lock(mu);
  objects.push_back(object);
  return object.get();
}

// Runs `body` on its own thread; false when it has not returned within the
// deadline (a deadlock). The thread is then left behind, so `body` may use
// only kept() objects.
bool finishes(std::function<void()> body, std::chrono::seconds deadline = 10s) {
  std::packaged_task<void()> task(std::move(body));
  std::future<void> done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(deadline) != std::future_status::ready) return false;
  done.get();
  return true;
}

TEST(Registry, FindsWhatWasAdded) {
  Registry<Widget> r("widget");
  ASSERT_TRUE(r.add(widget("b", 2)).ok());
  ASSERT_TRUE(r.add(widget("a", 1)).ok());
  Result<Widget> b = r.find("b");
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->name, "b");
  EXPECT_EQ(b->make(), 2);
  EXPECT_EQ(r.kind(), "widget");
}

TEST(Registry, RefusesASecondEntryOfTheSameNameAndKeepsTheFirst) {
  Registry<Widget> r("widget");
  ASSERT_TRUE(r.add(widget("tcp", 1)).ok());
  const Status again = r.add(widget("tcp", 2));
  EXPECT_EQ(again.code(), StatusCode::already_exists);
  EXPECT_NE(again.message().find("widget registry"), std::string::npos) << again.message();
  EXPECT_NE(again.message().find("'tcp'"), std::string::npos) << again.message();
  EXPECT_NE(again.message().find("refused"), std::string::npos) << again.message();
  EXPECT_EQ(r.find("tcp")->make(), 1);
  EXPECT_EQ(r.list().size(), 1u);
}

TEST(Registry, RefusesAnEntryWithoutAName) {
  Registry<Widget> r("widget");
  EXPECT_EQ(r.add(widget("", 1)).code(), StatusCode::invalid_argument);
  EXPECT_TRUE(r.list().empty());
}

TEST(Registry, UnknownNameIsNotFoundListingTheNamesThereAre) {
  Registry<Widget> r("widget");
  Result<Widget> none = r.find("x");
  EXPECT_EQ(none.status().code(), StatusCode::not_found);
  EXPECT_NE(none.status().message().find("registered: none"), std::string::npos) << none.status().message();
  ASSERT_TRUE(r.add(widget("alpha", 1)).ok());
  ASSERT_TRUE(r.add(widget("beta", 2)).ok());
  none = r.find_available("gamma");
  EXPECT_EQ(none.status().code(), StatusCode::not_found);
  EXPECT_NE(none.status().message().find("no widget named 'gamma' (registered: alpha, beta)"), std::string::npos)
      << none.status().message();
}

TEST(Registry, ListsEveryEntrySortedByNameWithItsProbeVerdict) {
  Registry<Widget> r("widget");
  ASSERT_TRUE(r.add(widget("zeta", 3, [] { return Status(StatusCode::unavailable, "no device here"); })).ok());
  ASSERT_TRUE(r.add(widget("alpha", 1)).ok());  // no probe: always available
  ASSERT_TRUE(r.add(widget("mu", 2, [] { return ok_status(); })).ok());
  const auto listed = r.list();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].entry.name, "alpha");
  EXPECT_EQ(listed[1].entry.name, "mu");
  EXPECT_EQ(listed[2].entry.name, "zeta");
  EXPECT_TRUE(listed[0].probe.ok());
  EXPECT_TRUE(listed[1].probe.ok());
  EXPECT_EQ(listed[2].probe.code(), StatusCode::unavailable);
  EXPECT_EQ(listed[2].probe.message(), "no device here");
  EXPECT_EQ(listed[2].entry.make(), 3);
  EXPECT_EQ(r.snapshot().size(), 3u);
}

TEST(Registry, FindAvailableRefusesAnEntryWhoseProbeFailsWithItsReason) {
  Registry<Widget> r("widget");
  ASSERT_TRUE(r.add(widget("gpu", 1, [] { return Status(StatusCode::unavailable, "built without CUDA"); })).ok());
  ASSERT_TRUE(r.add(widget("cpu", 2, [] { return ok_status(); })).ok());
  Result<Widget> gpu = r.find_available("gpu");
  EXPECT_EQ(gpu.status().code(), StatusCode::unavailable);
  EXPECT_EQ(gpu.status().message(), "widget 'gpu' unavailable: built without CUDA");
  EXPECT_TRUE(r.find("gpu").ok());  // still registered, and found as such
  Result<Widget> cpu = r.find_available("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  EXPECT_EQ(cpu->make(), 2);
}

TEST(RegistryDeathTest, ARegistrarOfATakenNameAbortsNamingIt) {
  // Static registrars use add_or_abort(): two plug-ins of one name are a bug
  // of the build, stopped in every build type with the registry's message.
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  Registry<Widget> r("widget");
  EXPECT_TRUE(r.add_or_abort(widget("tcp", 1)));
  EXPECT_DEATH(r.add_or_abort(widget("tcp", 2)), "a second widget named 'tcp' is refused");
}

// A plug point's entry and listing row, as transports and storage backends have.
struct Device {
  std::string name;
  std::function<Status()> probe;
  std::function<int()> capabilities;
  std::function<Result<std::unique_ptr<int>>(int)> create;
};
struct DeviceListing {
  std::string name;
  bool available = false;
  std::string why_unavailable;
  int capabilities = 0;
};

TEST(Registry, ListsRowsAndCreatesThroughTheEntrysFactory) {
  Registry<Device> r("device");
  ASSERT_TRUE(r.add(Device{"nic", nullptr, [] { return 40; },
                           [](int x) -> Result<std::unique_ptr<int>> { return std::make_unique<int>(x + 1); }})
                  .ok());
  ASSERT_TRUE(r.add(Device{"gpu", [] { return Status(StatusCode::unavailable, "no driver"); }, nullptr,
                           [](int) -> Result<std::unique_ptr<int>> { return std::make_unique<int>(0); }})
                  .ok());
  const std::vector<DeviceListing> rows = r.list_as<DeviceListing>();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "gpu");
  EXPECT_FALSE(rows[0].available);
  EXPECT_EQ(rows[0].why_unavailable, "no driver");
  EXPECT_EQ(rows[0].capabilities, 0);  // no capabilities function
  EXPECT_EQ(rows[1].name, "nic");
  EXPECT_TRUE(rows[1].available);
  EXPECT_TRUE(rows[1].why_unavailable.empty());
  EXPECT_EQ(rows[1].capabilities, 40);

  Result<std::unique_ptr<int>> made = r.create("nic", 6);
  ASSERT_TRUE(made.ok()) << made.status().to_string();
  EXPECT_EQ(**made, 7);
  EXPECT_EQ(r.create("gpu", 1).status().code(), StatusCode::unavailable);
  EXPECT_EQ(r.create("tpu", 1).status().code(), StatusCode::not_found);
}

TEST(Registry, AProbeThatCallsBackIntoTheRegistryDoesNotDeadlock) {
  // An entry built on another asks the registry about it from its probe
  // (as tests/hw_backends/wrapped_tcp_transport.hpp does), and may even add
  // one: the probes run outside the lock.
  auto* r = kept<Registry<Widget>>("widget");
  ASSERT_TRUE(r->add(widget("inner", 1)).ok());
  ASSERT_TRUE(r->add(widget("outer", 2, [r] {
                 Result<Widget> inner = r->find_available("inner");
                 if (!inner.ok()) return inner.status();
                 if (r->snapshot().empty()) return Status(StatusCode::internal, "empty snapshot");
                 if (!r->find("late").ok()) r->add(widget("late", 3)).ignore();
                 return ok_status();
               })).ok());
  struct Seen {
    std::vector<Registry<Widget>::Listed> listed;
    Status outer;
  };
  auto* seen = kept<Seen>();
  ASSERT_TRUE(finishes([r, seen] {
    seen->listed = r->list();
    seen->outer = r->find_available("outer").status();
  })) << "a probe calling back into the registry deadlocked";
  ASSERT_EQ(seen->listed.size(), 2u);  // "late" was added after the listing's snapshot
  EXPECT_EQ(seen->listed[1].entry.name, "outer");
  EXPECT_TRUE(seen->listed[1].probe.ok()) << seen->listed[1].probe.to_string();
  EXPECT_TRUE(seen->outer.ok()) << seen->outer.to_string();
  EXPECT_TRUE(r->find("late").ok());
  EXPECT_EQ(r->list().size(), 3u);
}

TEST(Registry, ASlowProbeHoldsUpNoOtherLookup) {
  auto* r = kept<Registry<Widget>>("widget");
  auto* entered = kept<std::promise<void>>();
  auto* release = kept<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  ASSERT_TRUE(r->add(widget("slow", 1, [entered, released] {
                 entered->set_value();
                 released.wait();  // until the test has used the registry meanwhile
                 return ok_status();
               })).ok());
  std::vector<Registry<Widget>::Listed> listed;
  std::thread lister([&] { listed = r->list(); });
  const bool probing = entered->get_future().wait_for(10s) == std::future_status::ready;
  // The lister sits in the slow probe; lookups and additions go on meanwhile.
  const bool went_on = probing && finishes([r] {
                         EXPECT_TRUE(r->find("slow").ok());
                         EXPECT_TRUE(r->add(widget("meanwhile", 2)).ok());
                         EXPECT_EQ(r->snapshot().size(), 2u);
                       });
  release->set_value();
  lister.join();
  ASSERT_TRUE(probing) << "the slow probe never ran";
  EXPECT_TRUE(went_on) << "a lookup waited for another thread's probe";
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(listed[0].probe.ok());
}

}  // namespace
}  // namespace sluice::base
