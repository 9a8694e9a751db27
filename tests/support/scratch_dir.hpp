// ScratchDir: a test's own folder, made fresh (mkdtemp) and removed with
// everything in it when the test ends. Tests that may run at once (a binary
// and its ASan twin, ctest -j) each get their own.
//   ScratchDir dir;                                // under gtest's TempDir()
//   ScratchDir disk("/var/tmp/", "sluice-fio-");   // where O_DIRECT works
// path() is "" when the folder could not be made (ASSERT on it).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

namespace sluice::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& parent = ::testing::TempDir(), const std::string& prefix = "sluice-test-") {
    std::string pattern = parent + prefix + "XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` to the file `name` in the folder; its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace sluice::testing
