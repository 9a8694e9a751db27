// Scans the repository's sources for the structure tests (the dependency
// rule, the layering of the worlds, pointers outside the repository).
#pragma once

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

namespace sluice::structure {

inline bool is_source(const std::filesystem::path& p) {
  const auto ext = p.extension();
  return ext == ".hpp" || ext == ".cpp" || ext == ".h" || ext == ".cu";
}

// "path:line: text" of every line of the sources under `folders` (relative
// to the repository root) that matches `pattern`.
inline std::vector<std::string> offending_lines(std::initializer_list<const char*> folders, const std::regex& pattern,
                                                bool (*wanted)(const std::filesystem::path&) = is_source) {
  std::vector<std::string> hits;
  for (const char* folder : folders) {
    const std::filesystem::path root = std::filesystem::path(SLUICE_SOURCE_DIR) / folder;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || !wanted(entry.path())) continue;
      std::ifstream in(entry.path());
      std::string line;
      int line_no = 0;
      while (std::getline(in, line)) {
        ++line_no;
        if (std::regex_search(line, pattern)) {
          hits.push_back(entry.path().string() + ":" + std::to_string(line_no) + ": " + line);
        }
      }
    }
  }
  return hits;
}

inline std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace sluice::structure
