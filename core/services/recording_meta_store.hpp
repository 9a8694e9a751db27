// RecordingMetaStore: a MetaStore decorator (RocksDB's FileSystemWrapper
// pattern) that hands every successful mutation to a sink as an absolute
// record (put X = v, remove X). The primary of a mirrored metadata shard
// wraps its store in one, so whatever a request changes, through whichever
// code path, reaches the secondary in the order it happened
// (meta_mirror.hpp). With no sink it only forwards.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/proto/messages.hpp"
#include "core/services/meta_store.hpp"

namespace sluice {

class RecordingMetaStore final : public MetaStore {
 public:
  using Sink = std::function<void(proto::MetaRecordDesc)>;

  explicit RecordingMetaStore(std::unique_ptr<MetaStore> inner) : inner_(std::move(inner)) {}

  // Called after each mutation that succeeded, before the mutating call returns.
  void set_sink(Sink sink) { sink_ = std::move(sink); }
  MetaStore& inner() { return *inner_; }

  Result<proto::InodeDesc> get_dir(std::string_view dir_path) const override { return inner_->get_dir(dir_path); }
  Status put_dir(std::string_view dir_path, const proto::InodeDesc& inode) override;
  Status remove_dir(std::string_view dir_path) override;
  Result<proto::InodeDesc> get_entry(std::string_view dir_path, std::string_view name) const override {
    return inner_->get_entry(dir_path, name);
  }
  Status put_entry(std::string_view dir_path, std::string_view name, const proto::InodeDesc& inode) override;
  Status remove_entry(std::string_view dir_path, std::string_view name) override;
  std::uint64_t entry_count(std::string_view dir_path) const override { return inner_->entry_count(dir_path); }
  MetaListPage list(std::string_view dir_path, std::uint64_t cookie, std::uint32_t max_entries) const override {
    return inner_->list(dir_path, cookie, max_entries);
  }
  std::uint64_t load_counter() const override { return inner_->load_counter(); }
  Status store_counter(std::uint64_t value) override;
  std::vector<std::string> list_dirs(std::string_view after, std::uint32_t max_dirs) const override {
    return inner_->list_dirs(after, max_dirs);
  }
  // Not recorded: the primary mirrors its replies itself (MetaRecordKind::reply).
  Status keep_reply(const KeptReply& reply) override { return inner_->keep_reply(reply); }
  Status drop_replies_before(std::uint64_t seq) override { return inner_->drop_replies_before(seq); }
  std::vector<KeptReply> kept_replies() const override { return inner_->kept_replies(); }
  // Not recorded: a store is cleared only as a secondary, which records nothing.
  Status clear() override { return inner_->clear(); }
  Status commit() override { return inner_->commit(); }

 private:
  void emit(proto::MetaRecordKind kind, std::string_view path, std::string_view name, const proto::InodeDesc* inode,
            std::uint64_t value);

  std::unique_ptr<MetaStore> inner_;
  Sink sink_;
};

}  // namespace sluice
