#include "tests/soak/soak_workload.hpp"

#include <algorithm>

#include "core/common/rng.hpp"

namespace sluice::soak {

std::uint64_t SoakLedger::begin_op(TimeNs now, std::string what) {
  std::lock_guard<std::mutex> lock(mu);
  const std::uint64_t id = next_op++;
  ++ops_started;
  open_ops[id] = now;
  open_what[id] = std::move(what);
  return id;
}

void SoakLedger::end_op(std::uint64_t id, TimeNs now) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = open_ops.find(id);
  if (it == open_ops.end()) return;
  ++ops_ended;
  const TimeNs took = now - it->second;
  longest_op_ns = std::max(longest_op_ns, took);
  if (took > k_op_deadline_ns) {
    ++ops_over_deadline;
    note("over the deadline: " + open_what[id] + " took " + std::to_string(took / k_ns_per_ms) + " ms");
  }
  open_ops.erase(it);
  open_what.erase(id);
}

std::uint64_t SoakLedger::hung_at(TimeNs now) const {
  std::uint64_t n = 0;
  for (const auto& [id, began] : open_ops) {
    if (now - began > k_op_deadline_ns) ++n;
  }
  return n;
}

// ---- SoakWriter ------------------------------------------------------------------

SoakWriter::SoakWriter(SoakWriterConfig config, std::shared_ptr<SoakLedger> ledger)
    : config_(std::move(config)), ledger_(std::move(ledger)) {}

std::uint64_t SoakWriter::begin_op(std::string what) { return ledger_->begin_op(ctx_->env.now(), std::move(what)); }

void SoakWriter::end_op(std::uint64_t id) { ledger_->end_op(id, ctx_->env.now()); }

void SoakWriter::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  done_ = std::move(done);
  std::uint64_t mix = config_.run_seed ^ (std::uint64_t{context.rank} << 32);
  for (std::uint32_t f = 0; f < config_.files_per_rank; ++f) {
    FileState file;
    file.path = config_.dir + "/r" + std::to_string(context.rank) + "_f" + std::to_string(f);
    file.seed = splitmix64(mix);
    files_.push_back(std::move(file));
  }
  // The directory may exist already (another rank made it): either way it is there after.
  const std::uint64_t op = begin_op("mkdir " + config_.dir);
  context.client.mkdir(config_.dir, 0755, [this, op](Result<proto::InodeDesc>) {
    end_op(op);
    next();
  });
}

void SoakWriter::next() {
  const std::uint32_t total = config_.files_per_rank * config_.writes_per_file;
  if (writes_done_ >= total) {
    auto done = std::move(done_);
    done(ok_status());
    return;
  }
  FileState& file = files_[writes_done_ % files_.size()];
  ++writes_done_;
  const TimeNs gap = config_.max_gap_ns > 0
                         ? static_cast<TimeNs>(ctx_->env.rng().uniform(static_cast<std::uint64_t>(config_.max_gap_ns)))
                         : 0;
  ctx_->ops.expect(ctx_->env.timer(gap), [this, &file](Completion&) {
    with_inode(file, [this, &file](bool have) {
      if (have) return write_one(file);
      {
        // No inode (create and stat both failed under the faults): this write fails.
        std::lock_guard<std::mutex> lock(ledger_->mu);
        ++ledger_->writes_tried;
        ++ledger_->writes_failed;
      }
      next();
    });
  });
}

void SoakWriter::with_inode(FileState& file, std::function<void(bool)> then) {
  if (file.inode) return then(true);
  const std::uint64_t op = begin_op("create " + file.path);
  ctx_->client.create(file.path, CreateOptions{}, [this, &file, op, then](Result<proto::InodeDesc> made) {
    end_op(op);
    if (made.ok()) {
      file.inode = *made;
      return then(true);
    }
    // A create whose reply was lost may have happened: find out.
    const std::uint64_t op2 = begin_op("stat " + file.path);
    ctx_->client.stat(file.path, [this, &file, op2, then](Result<proto::InodeDesc> found) {
      end_op(op2);
      if (found.ok()) file.inode = *found;
      then(found.ok());
    });
  });
}

void SoakWriter::write_one(FileState& file) {
  Rng& rng = ctx_->env.rng();
  const std::uint64_t length =
      config_.min_write_bytes + rng.uniform(config_.max_write_bytes - config_.min_write_bytes + 1);
  const std::uint64_t offset = file.end;
  {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ++ledger_->writes_tried;
  }
  // Failures under faults are expected and only counted; the first few say why.
  auto fail = [this](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      if (ledger_->failure_samples.size() < k_max_ledger_notes) ledger_->failure_samples.push_back(why);
      ++ledger_->writes_failed;
    }
    next();
  };
  Result<MemHandle> buf = ctx_->env.alloc(MemKind::host, 0, length);
  if (!buf.ok()) return fail(buf.status().to_string());
  const MemHandle buffer = *buf;
  ctx_->ops.expect(ctx_->env.fill(buffer, PatternSpec{file.seed, offset}), [this, &file, buffer, offset, length,
                                                                            fail](Completion& filled) {
    if (!filled.status.ok()) {
      ctx_->env.free(buffer);
      return fail(filled.status.to_string());
    }
    ctx_->ops.expect(ctx_->env.checksum(buffer), [this, &file, buffer, offset, length, fail](Completion& sum) {
      const std::uint64_t op =
          begin_op("write " + file.path + " [" + std::to_string(offset) + ", +" + std::to_string(length) + ")");
      ctx_->client.write(*file.inode, offset, buffer, config_.sync,
                         [this, &file, buffer, offset, length, fail, op, sum](Result<std::uint64_t> wrote) {
                           end_op(op);
                           if (!wrote.ok() || *wrote != length) {
                             ctx_->env.free(buffer);
                             return fail(wrote.ok() ? "short write" : wrote.status().to_string());
                           }
                           const std::uint64_t op2 = begin_op("close " + file.path);
                           ctx_->client.close(file.path, offset + length,
                                              [this, &file, buffer, offset, length, fail, op2, sum](Status closed) {
                                                end_op(op2);
                                                if (!closed.ok()) {
                                                  ctx_->env.free(buffer);
                                                  return fail(closed.to_string());
                                                }
                                                AckedWrite w{file.path, offset,     length,
                                                             file.seed, sum.crc32c, sum.crc_valid};
                                                {
                                                  std::lock_guard<std::mutex> lock(ledger_->mu);
                                                  ledger_->acked.push_back(w);
                                                }
                                                file.end = offset + length;
                                                file.inode->size_bytes = file.end;
                                                read_back(file, w, buffer);
                                              });
                         });
    });
  });
}

void SoakWriter::read_back(FileState& file, const AckedWrite& w, MemHandle buffer) {
  // Read into the same buffer after clearing it, so that stale bytes cannot pass.
  ctx_->ops.expect(
      ctx_->env.fill(buffer, PatternSpec{file.seed ^ 0x5A5A5A5AULL, w.offset}), [this, &file, w, buffer](Completion&) {
        const std::uint64_t op = begin_op("read-back " + w.path + " at " + std::to_string(w.offset));
        ctx_->client.read(*file.inode, w.offset, buffer, [this, w, buffer, op](Result<std::uint64_t> got) {
          end_op(op);
          auto finish = [this, buffer]() {
            ctx_->env.free(buffer);
            next();
          };
          if (!got.ok()) {
            std::lock_guard<std::mutex> lock(ledger_->mu);
            ++ledger_->readbacks;
            ++ledger_->readback_errors;
            return finish();
          }
          const std::uint64_t n = *got;
          ctx_->ops.expect(ctx_->env.checksum(buffer), [this, w, n, finish](Completion& sum) {
            std::lock_guard<std::mutex> lock(ledger_->mu);
            ++ledger_->readbacks;
            const bool wrong_bytes = sum.crc_valid && w.crc_valid && sum.crc32c != w.crc32c;
            if (n != w.length || wrong_bytes) {
              ++ledger_->readback_wrong;
              ledger_->note("read-back of " + w.path + " [" + std::to_string(w.offset) + ", +" +
                            std::to_string(w.length) + ") returned ok with " +
                            (n != w.length ? std::to_string(n) + " bytes" : std::string("wrong bytes (CRC32C)")));
            }
            finish();
          });
        });
      });
}

// ---- SoakVerifier ------------------------------------------------------------------

void SoakVerifier::start(WorkloadContext& context, std::function<void(Status)> done) {
  ctx_ = &context;
  done_ = std::move(done);
  {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    todo_ = ledger_->acked;
  }
  // Ranges of a file in order: one stat per file.
  std::stable_sort(todo_.begin(), todo_.end(),
                   [](const AckedWrite& a, const AckedWrite& b) { return a.path < b.path; });
  ctx_->ops.expect(ctx_->env.timer(0), [this](Completion&) { next(); });
}

void SoakVerifier::lost(const AckedWrite& w, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(ledger_->mu);
    ++ledger_->verified;
    ++ledger_->lost;
    ledger_->lost_writes.push_back(w);
    ledger_->note("lost: " + w.path + " [" + std::to_string(w.offset) + ", +" + std::to_string(w.length) + "): " + why);
  }
  ++index_;
  next();
}

void SoakVerifier::next() {
  if (index_ >= todo_.size()) {
    auto done = std::move(done_);
    done(ok_status());
    return;
  }
  const AckedWrite w = todo_[index_];
  if (auto it = inodes_.find(w.path); it != inodes_.end()) return check(w, it->second);
  const std::uint64_t op = ledger_->begin_op(ctx_->env.now(), "verify: stat " + w.path);
  ctx_->client.stat(w.path, [this, w, op](Result<proto::InodeDesc> inode) {
    ledger_->end_op(op, ctx_->env.now());
    if (!inode.ok()) return lost(w, "stat: " + inode.status().to_string());
    inodes_[w.path] = *inode;
    {
      std::lock_guard<std::mutex> lock(ledger_->mu);
      ledger_->inodes[w.path] = *inode;
    }
    check(w, *inode);
  });
}

void SoakVerifier::check(const AckedWrite& w, const proto::InodeDesc& inode) {
  if (inode.size_bytes < w.offset + w.length) {
    return lost(w, "the file's size is " + std::to_string(inode.size_bytes));
  }
  Result<MemHandle> buf = ctx_->env.alloc(MemKind::host, 0, w.length);
  if (!buf.ok()) return lost(w, "verifier buffer: " + buf.status().to_string());
  const MemHandle buffer = *buf;
  const std::uint64_t op =
      ledger_->begin_op(ctx_->env.now(), "verify: read " + w.path + " at " + std::to_string(w.offset));
  ctx_->client.read(inode, w.offset, buffer, [this, w, buffer, op](Result<std::uint64_t> got) {
    ledger_->end_op(op, ctx_->env.now());
    if (!got.ok()) {
      ctx_->env.free(buffer);
      return lost(w, "read: " + got.status().to_string());
    }
    if (*got != w.length) {
      ctx_->env.free(buffer);
      return lost(w, "read returned " + std::to_string(*got) + " bytes");
    }
    ctx_->ops.expect(ctx_->env.checksum(buffer), [this, w, buffer](Completion& sum) {
      ctx_->env.free(buffer);
      {
        std::lock_guard<std::mutex> lock(ledger_->mu);
        ++ledger_->verified;
        if (sum.crc_valid && w.crc_valid && sum.crc32c != w.crc32c) {
          ++ledger_->corrupt;
          ledger_->note("corrupt: " + w.path + " [" + std::to_string(w.offset) + ", +" + std::to_string(w.length) +
                        ") read back ok with a different CRC32C");
        }
      }
      ++index_;
      next();
    });
  });
}

}  // namespace sluice::soak
