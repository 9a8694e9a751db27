// StorageBackendWrapper: a StorageBackend that forwards every call to the
// backend it wraps (RocksDB's FileSystemWrapper/EnvWrapper). A backend that
// changes a few behaviours of another one (injects faults, slows it down)
// derives from it and overrides only those calls; the rest reach the inner
// backend unchanged. A new StorageBackend call gets its forwarding here once.
//
// Thread-safety and the rest of the contract are the inner backend's
// (storage_backend.hpp). The wrapper owns the inner backend; it is destroyed
// with the wrapper, after the subclass's members, unless the subclass calls
// destroy_inner() first (when the inner backend may still use memory the
// subclass owns, such as buffers of requests in flight).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hw_backends/storage_backend.hpp"

namespace sluice::hw {

class StorageBackendWrapper : public StorageBackend {
 public:
  // `inner` must not be null.
  explicit StorageBackendWrapper(std::unique_ptr<StorageBackend> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  const StorageCapabilities& capabilities() const override { return inner_->capabilities(); }
  std::string io_path() const override { return inner_->io_path(); }
  StorageStats stats() const override { return inner_->stats(); }
  Status register_buffers(std::span<const std::span<std::byte>> buffers) override {
    return inner_->register_buffers(buffers);
  }
  [[nodiscard]] Status submit(const StorageRequest& request) override { return inner_->submit(request); }
  std::size_t poll(std::vector<StorageCompletion>& out, std::size_t max_completions) override {
    return inner_->poll(out, max_completions);
  }
  int completion_fd() const override { return inner_->completion_fd(); }

 protected:
  StorageBackend& inner() { return *inner_; }
  const StorageBackend& inner() const { return *inner_; }
  // Destroys the inner backend now (dropping its requests in flight), for a
  // subclass's destructor; no call may reach the wrapper afterwards.
  void destroy_inner() { inner_.reset(); }

 private:
  std::unique_ptr<StorageBackend> inner_;
};

}  // namespace sluice::hw
