// Client: the file-system library a workload uses (BeeGFS client module,
// Lustre llite + lov), sans-I/O like every service.
//
// It is not a Service itself: a workload driver (core/workloads) is the
// service and owns a Client, forwarding it every event (handle()). All calls
// take a completion callback that is invoked exactly once, always from a later
// event (never inside the call).
//
// Namespace: paths are resolved through the shard core/namespace names for
// each entry; directory placements are cached (bounded, named limit) and a
// misrouted reply invalidates the cache entry and retries once.
// Data: a range is split by core/layout into chunk pieces; each piece is
// planned by core/sched (direct into the destination, or bounce through a
// pinned buffer near a GPU, and which NIC), sent as ReadChunk/WriteChunk to
// the target's storage server, and the bytes are checked: the client computes
// CRC32C of what arrived and compares it with the server's (verify_reads).
// At most max_inflight_chunks chunk requests are in flight per client, and
// each rail's window from core/sched bounds the requests on one NIC.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "core/layout/stripe_pattern.hpp"
#include "core/namespace/meta_sharding.hpp"
#include "core/services/chunk_planner.hpp"
#include "core/services/rpc.hpp"

namespace sluice {

struct ClientConfig {
  Endpoint mgmt;
  NamespaceConfig ns;
  StripeFlavor stripe_flavor = StripeFlavor::beegfs;
  std::uint32_t max_inflight_chunks = 64;       // chunk requests in flight per client
  std::size_t dir_cache_entries = 100'000;      // cached directory placements
  std::uint32_t readdir_page_entries = 1024;    // entries asked per Readdir
  std::uint64_t readdir_max_entries = 50'000'000;  // a listing larger than this fails
  bool verify_reads = true;                     // CRC32C of every chunk read
  std::uint32_t max_maps_refreshes = 5;         // per request that finds a shard or target unknown
  TimeNs maps_refresh_backoff_ns = 100 * k_ns_per_ms;  // first wait between refreshes; doubles
  RpcLimits rpc;
  // Planning of chunk transfers (path, rail, window); see core/sched.
  ChunkPlannerConfig planner;
};

struct CreateOptions {
  std::uint32_t mode = 0644;
  std::uint64_t chunk_bytes = 0;    // 0: the metadata server's default
  std::uint32_t stripe_count = 0;   // 0: the metadata server's default
  proto::ChooserKind chooser = proto::ChooserKind::server_default;
};

class Client {
 public:
  using StatusFn = std::function<void(Status)>;
  using InodeFn = std::function<void(Result<proto::InodeDesc>)>;
  using EntriesFn = std::function<void(Result<std::vector<proto::DirEntryDesc>>)>;
  using BytesFn = std::function<void(Result<std::uint64_t>)>;

  Client(Env& env, OpTable& ops, ClientConfig config);

  // Registers with mgmt and fetches the maps; ready(ok) when usable.
  void start(StatusFn ready);
  // Feeds an event; false if it was not for the client.
  bool handle(Event& event);

  void mkdir(const std::string& path, std::uint32_t mode, InodeFn done);
  void create(const std::string& path, const CreateOptions& options, InodeFn done);
  void stat(const std::string& path, InodeFn done);
  void readdir(const std::string& path, bool with_attrs, EntriesFn done);
  void unlink(const std::string& path, StatusFn done);
  void rmdir(const std::string& path, StatusFn done);
  void rename(const std::string& from, const std::string& to, StatusFn done);
  // Sets the size (and mtime) recorded in the inode: the close of a written file.
  void close(const std::string& path, std::uint64_t size_bytes, StatusFn done);

  // Reads [offset, offset + dst.length) of the file into dst (clamped to the
  // inode's size); done(bytes read). dst may be host, pinned or GPU memory.
  void read(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& dst, BytesFn done);
  // Writes src at offset; done(bytes written). sync: durable on completion.
  void write(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& src, bool sync, BytesFn done);

  // The client's request channel, shared with the workload for its own
  // coordination calls (one request-id space per service).
  RpcClient& rpc() { return rpc_; }
  std::uint64_t maps_version() const { return maps_version_; }
  // The storage targets of the maps last fetched from mgmt.
  const std::map<TargetId, proto::TargetInfoDesc>& targets() const { return targets_; }
  std::size_t inflight_chunks() const { return inflight_chunks_; }
  const ChunkPlanner& planner() const { return planner_; }

 private:
  struct IoRequest;
  struct ChunkJob {
    std::shared_ptr<IoRequest> request;
    TargetId target = k_no_id;
    std::uint64_t object_offset = 0;
    MemHandle user;         // the caller's slice for this piece
    std::uint64_t file_offset = 0;
    std::uint32_t refreshes = 0;
  };
  using PlacementFn = std::function<void(Result<DirPlacement>)>;

  void fetch_maps(StatusFn done);
  // Refreshes the maps until ready() holds (a server registers late, as on
  // real hardware at start-up), at most max_maps_refreshes times with an
  // exponential back-off; done(ok) or done(the last error / unavailable).
  void refresh_maps_until(std::function<bool()> ready, std::string what, StatusFn done, std::uint32_t attempt = 0);
  void meta_call(const std::string& path, proto::Message request, std::function<void(Result<proto::Message>)> done,
                 bool retried = false);
  void placement_of_dir(const std::string& dir_path, PlacementFn done);
  void shard_for_path(const std::string& path, std::function<void(Result<ShardId>)> done);
  Endpoint shard_endpoint(ShardId shard) const;
  void readdir_shard(std::shared_ptr<struct ListingState> state, ShardId shard, std::uint64_t cookie);

  void submit(const proto::InodeDesc& inode, std::uint64_t offset, const MemHandle& buffer, bool write, bool sync,
              BytesFn done);
  void pump();
  void start_job(ChunkJob job);
  void read_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server);
  void write_chunk(ChunkJob job, const ChunkPlan& plan, Endpoint server);
  void job_done(const ChunkJob& job, const ChunkPlan& plan, const Status& status, std::uint64_t bytes,
                std::optional<MemHandle> bounce);
  Endpoint target_endpoint(TargetId target) const;

  Env& env_;
  OpTable& ops_;
  ClientConfig config_;
  RpcClient rpc_;
  ChunkPlanner planner_;
  std::uint64_t maps_version_ = 0;
  std::map<TargetId, proto::TargetInfoDesc> targets_;
  std::map<ShardId, Endpoint> shards_;
  bool maps_fetching_ = false;
  std::vector<StatusFn> maps_waiters_;
  std::map<std::string, DirPlacement, std::less<>> dir_cache_;
  std::deque<ChunkJob> queued_jobs_;
  std::uint32_t inflight_chunks_ = 0;
};

}  // namespace sluice
