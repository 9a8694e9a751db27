// FileChecker: a test workload that opens (stats) a list of files, reads each
// one whole into host memory and verifies it against its pattern seed; it
// keeps the inodes it saw, so tests can find a file's id and stripe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/workloads/workload.hpp"

namespace sluice::testing {

struct CheckedFile {
  std::string path;
  std::uint64_t seed = 0;
  std::uint64_t expected_bytes = 0;
  bool verify = true;  // false: stat only
};

class FileChecker final : public Workload {
 public:
  explicit FileChecker(std::vector<CheckedFile> files) : files_(std::move(files)) {}
  void start(WorkloadContext& context, std::function<void(Status)> done) override;
  std::string name() const override { return "file_checker"; }

  // The inodes seen, in the order of the files (valid once finished ok).
  const std::vector<proto::InodeDesc>& inodes() const { return inodes_; }

 private:
  void check(std::size_t index);

  std::vector<CheckedFile> files_;
  std::vector<proto::InodeDesc> inodes_;
  WorkloadContext* ctx_ = nullptr;
  std::function<void(Status)> done_;
};

}  // namespace sluice::testing
