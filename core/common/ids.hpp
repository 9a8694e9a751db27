// Identifiers shared by every layer. Plain integers with names, so that wire
// messages, maps and logs stay simple; the names say which space an id is in.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>

namespace sluice {

using NodeId = std::uint32_t;     // a machine in the cluster (index into the cluster topology)
using TargetId = std::uint32_t;   // a storage target (an NVMe drive or directory of chunk files)
using ShardId = std::uint32_t;    // a metadata shard (one metadata server's part of the namespace)
using GroupId = std::uint32_t;    // a buddy group
using FileId = std::uint64_t;     // an inode number, unique in the file system
using RequestId = std::uint64_t;  // unique per sender; replies echo it
using ServiceIndex = std::uint32_t;

inline constexpr std::uint32_t k_no_id = 0xFFFFFFFFu;

// The address of one service instance: which node, and which service on it.
struct Endpoint {
  NodeId node = k_no_id;
  ServiceIndex service = k_no_id;

  bool valid() const { return node != k_no_id && service != k_no_id; }
  auto operator<=>(const Endpoint&) const = default;
  std::string to_string() const { return std::to_string(node) + ":" + std::to_string(service); }
};

}  // namespace sluice

template <>
struct std::hash<sluice::Endpoint> {
  std::size_t operator()(const sluice::Endpoint& e) const noexcept {
    return std::hash<std::uint64_t>{}((std::uint64_t{e.node} << 32) | e.service);
  }
};
