// RDMA keys carried from the client to the storage server (ReadChunk.dst_keys,
// WriteChunk.src_keys): the server's one-sided transfer carries exactly the
// key the client gave for the NIC the transfer uses, a wrong key fails the
// chunk visibly, and every transfer without a key is counted as a fallback.
// TestWorld with rdma_keys plays the NIC: it grants synthetic keys and
// checks a carried key as an HCA checks an rkey.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "core/services/storage_service.hpp"
#include "tests/core/services/scripted_workload.hpp"
#include "tests/support/test_cluster.hpp"

namespace sluice::testing {
namespace {

constexpr std::uint64_t k_chunk_bytes = 64 * 1024;
constexpr TargetId k_target = 1;
constexpr std::uint32_t k_client_nics = 3;

struct SeenTransfer {
  Endpoint by;
  TransferSpec spec;
};

// Sends one WriteChunk then one ReadChunk to a storage server, by hand, with
// keys for every NIC of its node (nic 0..k_client_nics-1): the write says
// client NIC `write_nic`, the read `read_nic`. `tamper` corrupts the read's
// key for read_nic before sending.
class ChunkSender final : public Service {
 public:
  ChunkSender(Env& env, Endpoint storage, std::uint32_t write_nic, std::uint32_t read_nic, bool tamper)
      : env_(env), storage_(storage), write_nic_(write_nic), read_nic_(read_nic), tamper_(tamper) {}

  void start() override {
    src_ = env_.alloc(MemKind::host, 0, k_chunk_bytes).value();
    dst_ = env_.alloc(MemKind::gpu, 0, k_chunk_bytes).value();
    fill_op_ = env_.fill(src_, PatternSpec{11, 0});
  }

  void on_event(Event& event) override {
    if (auto* c = std::get_if<Completion>(&event)) {
      if (c->op == fill_op_) {
        sum_op_ = env_.checksum(src_);
      } else if (c->op == sum_op_) {
        proto::WriteChunk w;
        w.request_id = 1;
        w.file_id = 77;
        w.target = k_target;
        w.length = k_chunk_bytes;
        w.src = src_;
        w.rail = proto::RailDesc{write_nic_, k_no_id};
        w.crc32c = c->crc32c;
        w.src_keys = keys(src_);
        env_.send(storage_, std::move(w)).ignore();
      }
      return;
    }
    auto& d = std::get<Delivery>(event);
    const auto* reply = std::get_if<proto::ChunkReply>(&d.message);
    if (reply == nullptr) return;
    if (reply->request_id == 1) {
      write_reply = *reply;
      if (reply->status != StatusCode::ok) return;
      proto::ReadChunk r;
      r.request_id = 2;
      r.file_id = 77;
      r.target = k_target;
      r.length = k_chunk_bytes;
      r.dst = dst_;
      r.rail = proto::RailDesc{read_nic_, k_no_id};
      r.path = proto::ChunkPath::direct;
      r.dst_keys = keys(dst_);
      if (tamper_) r.dst_keys[read_nic_].rkey ^= 0x40u;
      env_.send(storage_, std::move(r)).ignore();
    } else {
      read_reply = *reply;
    }
  }

  std::string name() const override { return "chunk-sender"; }

  std::vector<proto::RdmaRegionDesc> keys(const MemHandle& range) {
    std::vector<proto::RdmaRegionDesc> out;
    for (std::uint32_t nic = 0; nic < k_client_nics; ++nic)
      out.push_back(env_.remote_access(range, nic, storage_.node).value());
    return out;
  }

  MemHandle src_, dst_;
  std::optional<proto::ChunkReply> write_reply, read_reply;

 private:
  Env& env_;
  Endpoint storage_;
  std::uint32_t write_nic_;
  std::uint32_t read_nic_;
  bool tamper_;
  OpId fill_op_ = 0;
  OpId sum_op_ = 0;
};

struct SenderRun {
  std::unique_ptr<TestWorld> world;
  ChunkSender* sender = nullptr;
  std::vector<SeenTransfer> storage_transfers;
};

SenderRun run_sender(std::uint32_t write_nic, std::uint32_t read_nic, bool tamper) {
  SenderRun run;
  TestWorldConfig config;
  config.rdma_keys = true;
  run.world = std::make_unique<TestWorld>(config);
  TestWorld& world = *run.world;
  world.add_target(k_target, 1);
  StorageServiceConfig sc;
  sc.targets = {k_target};
  auto& storage = world.add_service<StorageService>(1, sc);
  const Endpoint storage_ep = world.endpoint_of(storage);
  run.sender = &world.add_service<ChunkSender>(2, storage_ep, write_nic, read_nic, tamper);
  world.set_transfer_observer([&run, storage_ep](Endpoint by, const TransferSpec& spec) {
    if (by == storage_ep) run.storage_transfers.push_back(SeenTransfer{by, spec});
  });
  world.start();
  world.run_until([&run] { return run.sender->read_reply.has_value(); }, 1'000'000);
  return run;
}

TEST(RdmaKeyPath, StorageTransfersCarryExactlyTheClientsKeyForTheChosenNic) {
  SenderRun run = run_sender(/*write_nic=*/2, /*read_nic=*/1, /*tamper=*/false);
  TestWorld& world = *run.world;
  ChunkSender& sender = *run.sender;
  ASSERT_TRUE(sender.write_reply.has_value());
  ASSERT_EQ(sender.write_reply->status, StatusCode::ok) << sender.write_reply->error;
  ASSERT_TRUE(sender.read_reply.has_value());
  ASSERT_EQ(sender.read_reply->status, StatusCode::ok) << sender.read_reply->error;
  EXPECT_EQ(sender.read_reply->bytes, k_chunk_bytes);

  ASSERT_EQ(run.storage_transfers.size(), 2u);
  const TransferSpec& pull = run.storage_transfers[0].spec;  // the write: RDMA READ from the client
  EXPECT_EQ(pull.mode, TransferMode::rdma_read);
  EXPECT_EQ(pull.src_nic, 2u);
  ASSERT_TRUE(pull.remote_region.has_value());
  EXPECT_EQ(*pull.remote_region, world.rdma_key_of(2, sender.src_.region, 2));
  const TransferSpec& push = run.storage_transfers[1].spec;  // the read: RDMA WRITE into the client's GPU
  EXPECT_EQ(push.mode, TransferMode::rdma_write);
  EXPECT_EQ(push.dst_nic, 1u);
  ASSERT_TRUE(push.remote_region.has_value());
  EXPECT_EQ(*push.remote_region, world.rdma_key_of(2, sender.dst_.region, 1));
  EXPECT_NE(*push.remote_region, world.rdma_key_of(2, sender.dst_.region, 0)) << "one key per NIC";

  EXPECT_EQ(world.counter(k_metric_rdma_key_carried), 2.0);
  EXPECT_EQ(world.counter(k_metric_rdma_key_fallback), 0.0);
  // The bytes went all the way: the GPU region holds what was written.
  const auto dst = world.bytes(sender.dst_);
  const auto src = world.bytes(sender.src_);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
}

TEST(RdmaKeyPath, AKeyThatIsNotTheRegionsFailsTheChunkAsARemoteAccessError) {
  SenderRun run = run_sender(0, 2, /*tamper=*/true);
  ChunkSender& sender = *run.sender;
  ASSERT_TRUE(sender.write_reply.has_value());
  ASSERT_EQ(sender.write_reply->status, StatusCode::ok) << sender.write_reply->error;
  ASSERT_TRUE(sender.read_reply.has_value());
  EXPECT_EQ(sender.read_reply->status, StatusCode::invalid_argument);
  EXPECT_NE(sender.read_reply->error.find("remote access error"), std::string::npos) << sender.read_reply->error;
  const auto dst = run.world->bytes(sender.dst_);
  EXPECT_TRUE(std::all_of(dst.begin(), dst.end(), [](std::byte b) { return b == std::byte{0}; })) << "no byte landed";
}

// Writes 1 MiB from host memory and reads it back into GPU memory through
// the client, verifying it there.
Scripted::Script write_then_read_to_gpu(std::uint64_t* read_bytes) {
  return [read_bytes](WorkloadContext& ctx, std::function<void(Status)> done) {
    constexpr std::uint64_t k_bytes = 1 * k_mib;
    ctx.client.create("/k", CreateOptions{}, [&ctx, done, read_bytes](Result<proto::InodeDesc> inode) {
      if (!inode.ok()) return done(inode.status());
      MemHandle src = ctx.env.alloc(MemKind::host, 0, k_bytes).value();
      ctx.ops.expect(ctx.env.fill(src, PatternSpec{5, 0}), [&ctx, done, read_bytes, src, inode = *inode](Completion&) {
        ctx.client.write(inode, 0, src, true, [&ctx, done, read_bytes, inode](Result<std::uint64_t> w) {
          if (!w.ok()) return done(w.status());
          proto::InodeDesc sized = inode;
          sized.size_bytes = k_bytes;
          MemHandle gpu = ctx.env.alloc(MemKind::gpu, 0, k_bytes).value();
          ctx.client.read(sized, 0, gpu, [&ctx, done, read_bytes, gpu](Result<std::uint64_t> r) {
            if (!r.ok()) return done(r.status());
            *read_bytes = *r;
            ctx.ops.expect(ctx.env.verify(gpu, PatternSpec{5, 0}), [done](Completion& c) { done(c.status); });
          });
        });
      });
    });
  };
}

struct ClusterRun {
  double carried = 0;
  double fallback = 0;
  std::uint64_t read_bytes = 0;
  Status result;
  std::size_t one_sided = 0;     // storage transfers on rdma_write/rdma_read
  std::size_t with_key = 0;      // of those, how many carried a key
  std::size_t keys_correct = 0;  // of those, how many were the region's key for the transfer's remote NIC
};

ClusterRun run_cluster(bool rdma_keys, bool gpu_reachable) {
  TestClusterSpec spec;
  spec.world.rdma_keys = rdma_keys;
  TestCluster cluster(spec);
  ClusterRun out;
  if (!cluster.ready().ok()) {
    out.result = cluster.ready();
    return out;
  }
  TestWorld& world = cluster.world();
  world.set_transfer_observer([&out, &world](Endpoint by, const TransferSpec& spec_seen) {
    const bool one_sided = spec_seen.mode == TransferMode::rdma_write || spec_seen.mode == TransferMode::rdma_read;
    if (!one_sided || spec_seen.src.node == spec_seen.dst.node) return;
    ++out.one_sided;
    if (!spec_seen.remote_region) return;
    ++out.with_key;
    const bool remote_is_dst = spec_seen.dst.node != by.node;
    const MemHandle& remote = remote_is_dst ? spec_seen.dst : spec_seen.src;
    const std::uint32_t nic = remote_is_dst ? spec_seen.dst_nic : spec_seen.src_nic;
    if (*spec_seen.remote_region == world.rdma_key_of(remote.node, remote.region, nic)) ++out.keys_correct;
  });
  ClientConfig client;
  client.planner.caps.gpu_memory_reachable = gpu_reachable;
  auto& host = cluster.add_host(std::make_unique<Scripted>(write_then_read_to_gpu(&out.read_bytes)), 0, 1, client);
  if (!cluster.run()) {
    out.result = error(StatusCode::timed_out, "the cluster did not finish");
    return out;
  }
  out.result = host.result();
  out.carried = world.counter(k_metric_rdma_key_carried);
  out.fallback = world.counter(k_metric_rdma_key_fallback);
  return out;
}

TEST(RdmaKeyPath, ClientChunksCarryKeysAndNoTransferFallsBack) {
  const ClusterRun run = run_cluster(/*rdma_keys=*/true, /*gpu_reachable=*/true);
  ASSERT_TRUE(run.result.ok()) << run.result.to_string();
  EXPECT_EQ(run.read_bytes, 1 * k_mib);
  EXPECT_GT(run.one_sided, 0u);
  EXPECT_EQ(run.with_key, run.one_sided) << "every one-sided storage transfer carried the client's key";
  EXPECT_EQ(run.keys_correct, run.with_key);
  EXPECT_EQ(run.carried, static_cast<double>(run.one_sided));
  EXPECT_EQ(run.fallback, 0.0);
}

TEST(RdmaKeyPath, BouncedReadsAreStreamedWithoutKeysWhileWritesStillCarryThem) {
  const ClusterRun run = run_cluster(true, /*gpu_reachable=*/false);
  ASSERT_TRUE(run.result.ok()) << run.result.to_string();
  EXPECT_EQ(run.read_bytes, 1 * k_mib);
  // Only the write chunks are one-sided (RDMA READ by the server); reads bounce as streams.
  EXPECT_GT(run.one_sided, 0u);
  EXPECT_EQ(run.with_key, run.one_sided);
  EXPECT_EQ(run.fallback, 0.0);
}

TEST(RdmaKeyPath, AWorldWithoutKeysCarriesNoneAndCountsNothing) {
  const ClusterRun run = run_cluster(/*rdma_keys=*/false, true);
  ASSERT_TRUE(run.result.ok()) << run.result.to_string();
  EXPECT_GT(run.one_sided, 0u);
  EXPECT_EQ(run.with_key, 0u) << "Env's default remote_access is unavailable: nothing to carry";
  EXPECT_EQ(run.carried, 0.0);
  EXPECT_EQ(run.fallback, 0.0) << "a world without keys has nothing to fall back from";
}

}  // namespace
}  // namespace sluice::testing
