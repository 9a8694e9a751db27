// The R1 soak's workloads (issue 9): a writer that records every
// acknowledged write while faults happen, and a verifier that reads every
// acknowledged write back after the faults healed.
//
// Acknowledged means: write() of the range succeeded AND the close() that
// records the new size in the inode succeeded. A write alone is not visible
// to another client (reads are clamped to the inode's size, close-to-open
// consistency as NFS and BeeGFS give), so the file system has promised
// nothing before both. Ranges of one file never overlap, and the bytes of a
// range are a function of (file seed, offset) (core/common/pattern.hpp), so a
// failed write retried at the same offset writes the same bytes.
//
// Both share a SoakLedger with the harness. In HwEnv the workloads run on
// service threads while the harness waits, so the ledger has a mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/workloads/workload.hpp"

namespace sluice::soak {

// An operation that has not ended this long after it began is a hang: the
// longest legitimate wait is a mirrored chunk sent to a dead primary that
// mgmt has not switched over yet, 1 + mirror_failovers times, each send
// waiting out the client's RPC (RpcLimits::give_up_ns: 2 + 4 + 8 s) and a
// maps refresh (max_maps_refreshes waits from maps_refresh_backoff_ns,
// doubling): 5 x (14 + 3.1) s = 85.5 s with the defaults; plus a margin of
// one more such round for a chunk queued behind it.
inline TimeNs longest_legitimate_op_ns() {
  const ClientConfig c{};
  TimeNs refresh_ns = 0;
  for (std::uint32_t a = 0; a < c.max_maps_refreshes; ++a) refresh_ns += c.maps_refresh_backoff_ns << a;
  const TimeNs round_ns = c.rpc.give_up_ns() + refresh_ns;
  return (c.mirror_failovers + 2) * round_ns;
}
inline const TimeNs k_op_deadline_ns = longest_legitimate_op_ns();
// Problems kept word for word (the rest are only counted).
inline constexpr std::size_t k_max_ledger_notes = 32;

struct AckedWrite {
  std::string path;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t pattern_seed = 0;
  std::uint32_t crc32c = 0;
  bool crc_valid = false;  // false in worlds that move no bytes (SimEnv)
};

struct SoakLedger {
  std::mutex mu;
  std::vector<AckedWrite> acked;
  // During the faulty phase.
  std::uint64_t writes_tried = 0;
  std::uint64_t writes_failed = 0;           // write or close ended with an error (allowed under faults)
  std::vector<std::string> failure_samples;  // why, for the first few
  std::uint64_t readbacks = 0;
  std::uint64_t readback_errors = 0;  // an error status (allowed under faults)
  std::uint64_t readback_wrong = 0;   // ok status, wrong bytes or length: silent corruption
  // Verification after healing.
  std::uint64_t verified = 0;
  std::uint64_t lost = 0;  // an acknowledged write that cannot be read back in full
  std::vector<AckedWrite> lost_writes;
  std::uint64_t corrupt = 0;  // read back ok with wrong bytes
  // Every client operation of both phases.
  std::uint64_t ops_started = 0;
  std::uint64_t ops_ended = 0;
  std::uint64_t ops_over_deadline = 0;  // ended, but later than k_op_deadline_ns
  std::map<std::uint64_t, TimeNs> open_ops;
  std::map<std::uint64_t, std::string> open_what;  // what each open operation is
  std::uint64_t next_op = 1;
  // The inodes the verifier found, by path (for the harness's metadata check).
  std::map<std::string, proto::InodeDesc> inodes;
  std::vector<std::string> notes;

  void note(std::string line) {
    if (notes.size() < k_max_ledger_notes) notes.push_back(std::move(line));
  }
  TimeNs longest_op_ns = 0;

  // Operations still open at `now` that began more than k_op_deadline_ns ago.
  std::uint64_t hung_at(TimeNs now) const;
  // An operation begins / ends at `now` (both take the lock).
  std::uint64_t begin_op(TimeNs now, std::string what);
  void end_op(std::uint64_t id, TimeNs now);
};

struct SoakWriterConfig {
  std::uint64_t run_seed = 1;
  std::string dir = "/soak";
  std::uint32_t files_per_rank = 2;
  std::uint32_t writes_per_file = 6;
  std::uint64_t min_write_bytes = 1;
  std::uint64_t max_write_bytes = 200 * k_kib;
  // A pause of up to this long before each write spreads the writes over
  // the fault window.
  TimeNs max_gap_ns = 800 * k_ns_per_ms;
  bool sync = true;
};

class SoakWriter final : public Workload {
 public:
  SoakWriter(SoakWriterConfig config, std::shared_ptr<SoakLedger> ledger);
  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "soak_writer"; }

 private:
  struct FileState {
    std::string path;
    std::uint64_t seed = 0;
    std::uint64_t end = 0;  // acknowledged bytes [0, end)
    std::optional<proto::InodeDesc> inode;
  };
  void next();
  void write_one(FileState& file);
  void with_inode(FileState& file, std::function<void(bool)> then);
  void read_back(FileState& file, const AckedWrite& w, MemHandle buffer);
  std::uint64_t begin_op(std::string what);
  void end_op(std::uint64_t id);

  SoakWriterConfig config_;
  std::shared_ptr<SoakLedger> ledger_;
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
  std::vector<FileState> files_;
  std::uint32_t writes_done_ = 0;  // attempts, over all files
};

class SoakVerifier final : public Workload {
 public:
  explicit SoakVerifier(std::shared_ptr<SoakLedger> ledger) : ledger_(std::move(ledger)) {}
  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "soak_verifier"; }

 private:
  void next();
  void check(const AckedWrite& w, const proto::InodeDesc& inode);
  void lost(const AckedWrite& w, const std::string& why);

  std::shared_ptr<SoakLedger> ledger_;
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
  std::vector<AckedWrite> todo_;
  std::size_t index_ = 0;
  std::map<std::string, proto::InodeDesc> inodes_;
};

}  // namespace sluice::soak
