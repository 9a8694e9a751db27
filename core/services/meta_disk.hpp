// MetaDisk: a metadata server's durable store where the world has no real
// one (simulation, the test worlds). The disk outlives the service, so a
// restarted (killed, then rebuilt) server finds its namespace and kept
// replies again, as beegfs-meta finds its on-disk store; the in-memory
// default would model a server that loses its disk on every crash. Every
// mutation is durable at once (commit() has nothing to do). It is copyable
// (the worlds rebuild a restarted service from copies of its arguments) and
// converts to the store a MetaService takes; opener() gives the same disk to
// MetaServiceConfig::open_store.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/services/meta_store.hpp"

namespace sluice {

// A MetaStore that forwards every call to a shared InMemoryMetaStore.
class DiskMetaStore final : public MetaStore {
 public:
  explicit DiskMetaStore(std::shared_ptr<InMemoryMetaStore> disk) : disk_(std::move(disk)) {}
  Result<proto::InodeDesc> get_dir(std::string_view d) const override { return disk_->get_dir(d); }
  Status put_dir(std::string_view d, const proto::InodeDesc& i) override { return disk_->put_dir(d, i); }
  Status remove_dir(std::string_view d) override { return disk_->remove_dir(d); }
  Result<proto::InodeDesc> get_entry(std::string_view d, std::string_view n) const override {
    return disk_->get_entry(d, n);
  }
  Status put_entry(std::string_view d, std::string_view n, const proto::InodeDesc& i) override {
    return disk_->put_entry(d, n, i);
  }
  Status remove_entry(std::string_view d, std::string_view n) override { return disk_->remove_entry(d, n); }
  std::uint64_t entry_count(std::string_view d) const override { return disk_->entry_count(d); }
  MetaListPage list(std::string_view d, std::uint64_t c, std::uint32_t m) const override {
    return disk_->list(d, c, m);
  }
  std::uint64_t load_counter() const override { return disk_->load_counter(); }
  Status store_counter(std::uint64_t v) override { return disk_->store_counter(v); }
  std::vector<std::string> list_dirs(std::string_view a, std::uint32_t m) const override {
    return disk_->list_dirs(a, m);
  }
  Status keep_reply(const KeptReply& r) override { return disk_->keep_reply(r); }
  Status drop_replies_before(std::uint64_t seq) override { return disk_->drop_replies_before(seq); }
  std::vector<KeptReply> kept_replies() const override { return disk_->kept_replies(); }
  Status clear() override { return disk_->clear(); }

 private:
  std::shared_ptr<InMemoryMetaStore> disk_;
};

struct MetaDisk {
  std::shared_ptr<InMemoryMetaStore> disk = std::make_shared<InMemoryMetaStore>();
  operator std::unique_ptr<MetaStore>() const { return std::make_unique<DiskMetaStore>(disk); }  // NOLINT: by design
  std::function<Result<std::unique_ptr<MetaStore>>()> opener() const {
    return [disk = disk]() -> Result<std::unique_ptr<MetaStore>> {
      return std::unique_ptr<MetaStore>(std::make_unique<DiskMetaStore>(disk));
    };
  }
};

}  // namespace sluice
