#include "core/env.hpp"

namespace sluice {

std::string_view to_string(TransferMode mode) {
  switch (mode) {
    case TransferMode::rdma_write: return "rdma_write";
    case TransferMode::rdma_read: return "rdma_read";
    case TransferMode::stream: return "stream";
    case TransferMode::local_copy: return "local_copy";
  }
  return "unknown";
}

std::string_view to_string(StorageOp op) {
  switch (op) {
    case StorageOp::read: return "read";
    case StorageOp::write: return "write";
    case StorageOp::remove: return "remove";
    case StorageOp::stat: return "stat";
    case StorageOp::flush: return "flush";
    case StorageOp::allocate: return "allocate";
    case StorageOp::punch: return "punch";
  }
  return "unknown";
}

std::string_view to_string(CostKind kind) {
  switch (kind) {
    case CostKind::meta_lookup: return "meta_lookup";
    case CostKind::meta_create: return "meta_create";
    case CostKind::meta_mkdir: return "meta_mkdir";
    case CostKind::meta_stat: return "meta_stat";
    case CostKind::meta_readdir_entry: return "meta_readdir_entry";
    case CostKind::meta_unlink: return "meta_unlink";
    case CostKind::meta_rename: return "meta_rename";
    case CostKind::meta_setattr: return "meta_setattr";
    case CostKind::storage_request: return "storage_request";
    case CostKind::client_request: return "client_request";
    case CostKind::workload_step: return "workload_step";
    case CostKind::count_: break;
  }
  return "unknown";
}

Result<proto::RdmaRegionDesc> Env::remote_access(const MemHandle& range, std::uint32_t /*nic*/, NodeId /*grantee*/) {
  return error(StatusCode::unavailable,
               "remote access to " + range.to_string() + ": this Env has no RDMA (remote memory needs no key here)");
}

std::vector<proto::RdmaRegionDesc> rdma_keys_for(Env& env, const MemHandle& range, std::uint32_t nic, NodeId grantee) {
  Result<proto::RdmaRegionDesc> key = env.remote_access(range, nic, grantee);
  if (!key.ok()) {
    if (key.status().code() != StatusCode::unavailable) {
      env.log(LogLevel::warn, "no RDMA key carried for " + range.to_string() + ": " + key.status().to_string());
    }
    return {};
  }
  return {*key};
}

}  // namespace sluice
