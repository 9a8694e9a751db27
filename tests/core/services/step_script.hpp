// Scripts of client calls for service tests, written flat: a list of steps
// run one after another (each calls next() once its call has answered), and
// Answers, which records what each call answered under a name the step gives.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/common/pattern.hpp"
#include "core/services/client.hpp"
#include "tests/core/services/scripted_workload.hpp"

namespace sluice::testing {

// A script of steps run one after another, each calling next() once its
// client call has answered: flat scripts instead of nested callbacks.
using Step = std::function<void(WorkloadContext&, std::function<void()> next)>;
struct StepRunner : std::enable_shared_from_this<StepRunner> {
  std::vector<Step> steps;
  WorkloadContext* ctx = nullptr;
  std::function<void(Status)> done;
  std::size_t next = 0;
  void go() {
    if (next == steps.size()) return done(ok_status());
    const std::size_t i = next++;
    steps[i](*ctx, [self = shared_from_this()] { self->go(); });
  }
};
inline Scripted::Script in_order(std::vector<Step> steps) {
  return [steps = std::move(steps)](WorkloadContext& ctx, std::function<void(Status)> done) {
    auto runner = std::make_shared<StepRunner>();
    runner->steps = steps;
    runner->ctx = &ctx;
    runner->done = std::move(done);
    runner->go();
  };
}

// What the link scenarios' client calls answered, by a name each step gives.
struct Answers {
  std::map<std::string, proto::InodeDesc> inodes;
  std::map<std::string, StatusCode> codes;
  std::map<std::string, std::string> errors;
  Client::InodeFn inode(const std::string& key, std::function<void()> next) {
    return [this, key, next](Result<proto::InodeDesc> r) {
      if (r.ok()) inodes[key] = *r;
      status(key, next)(r.status());
    };
  }
  Client::StatusFn status(const std::string& key, std::function<void()> next) {
    return [this, key, next](const Status& s) {
      codes[key] = s.code();
      errors[key] = s.message();
      next();
    };
  }
  StatusCode code(const std::string& key) const { return codes.count(key) != 0 ? codes.at(key) : StatusCode::internal; }
};

// Creates file `path` with the default options; its inode in `x` under `path`.
inline Step create_file(Answers& x, std::string path) {
  return [&x, path](WorkloadContext& ctx, std::function<void()> next) {
    ctx.client.create(path, CreateOptions{}, x.inode(path, next));
  };
}

// Opens `path` at its metadata server (Client::open) with a new open_id,
// kept in ids[path]; its inode in `x` under "open " + path.
inline Step open_file(Answers& x, std::map<std::string, std::uint64_t>& ids, std::string path) {
  return [&x, &ids, path](WorkloadContext& ctx, std::function<void()> next) {
    ids[path] = ctx.client.new_open_id();
    ctx.client.open(path, ids[path], x.inode("open " + path, next));
  };
}

// Writes `bytes` of pattern `seed` at the start of `path` (created before) and records the size (close).
inline Step write_pattern(const std::string& path, Answers& a, const std::string& created, std::uint64_t bytes,
                          std::uint64_t seed) {
  return [path, &a, created, bytes, seed](WorkloadContext& ctx, std::function<void()> next) {
    MemHandle buf = ctx.env.alloc(MemKind::host, 0, bytes).value();
    ctx.ops.expect(ctx.env.fill(buf, PatternSpec{seed, 0}), [&ctx, &a, path, created, bytes, buf, next](Completion&) {
      ctx.client.write(a.inodes.at(created), 0, buf, false, [&ctx, &a, path, bytes, next](Result<std::uint64_t> w) {
        if (!w.ok()) return a.status("write " + path, next)(w.status());
        ctx.client.close(path, bytes, a.status("write " + path, next));
      });
    });
  };
}

// Reads `bytes` of `path` (stat, read) and checks them against pattern `seed`: codes["read " + path].
inline Step read_pattern(const std::string& path, Answers& a, std::uint64_t bytes, std::uint64_t seed) {
  return [path, &a, bytes, seed](WorkloadContext& ctx, std::function<void()> next) {
    ctx.client.stat(path, [&ctx, &a, path, bytes, seed, next](Result<proto::InodeDesc> st) {
      const auto fail = a.status("read " + path, next);
      if (!st.ok()) return fail(st.status());
      MemHandle in = ctx.env.alloc(MemKind::host, 0, bytes).value();
      ctx.client.read(*st, 0, in, [&ctx, seed, in, fail](Result<std::uint64_t> r) {
        if (!r.ok()) return fail(r.status());
        ctx.ops.expect(ctx.env.verify(in, PatternSpec{seed, 0}), [fail](Completion& c) { fail(c.status); });
      });
    });
  };
}

}  // namespace sluice::testing
