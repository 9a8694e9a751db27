// Absolute paths of the sluice namespace: validation, normalisation, split
// into parent + name, and the walk over components.
//
// The canonical form every service stores and sends is an absolute path
// without empty components, "." or "..": "/" for the root, else "/a/b/c"
// (no trailing slash). Components are byte strings; only '/' and NUL are
// special (as in POSIX). Symbolic links do not exist in the namespace, so
// "." and ".." are refused instead of resolved: a client resolves them
// against its working directory before a path reaches the core.
//
// Contract: pure functions, no allocation except where a std::string is
// returned. Functions returning views return views into their argument; they
// stay valid as long as the argument's storage does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "core/common/status.hpp"

namespace sluice {

// Bytes of a whole path, Linux PATH_MAX (limits.h); the same as the wire
// limit k_max_path_bytes (core/proto/wire_limits.hpp).
inline constexpr std::size_t k_path_bytes_max = 4096;
// Bytes of one component, Linux NAME_MAX (limits.h); the wire limit k_max_name_bytes.
inline constexpr std::size_t k_name_bytes_max = 255;

// Ok if `name` can be one component: 1..k_name_bytes_max bytes, no '/', no
// NUL, not "." or "..". The message names the problem and quotes the name.
Status validate_name(std::string_view name);

// Ok if `path` is canonical (see above) and within k_path_bytes_max. Services
// check every path that arrives from the wire with this.
Status validate_path(std::string_view path);

// The canonical form of an absolute path written by a person or a workload:
// repeated slashes collapse ("//a///b" -> "/a/b") and a trailing slash is
// dropped ("/a/" -> "/a"). Relative paths, "." and "..", NUL bytes, names
// over k_name_bytes_max and results over k_path_bytes_max are errors
// (invalid_argument) naming the problem.
Result<std::string> normalize_path(std::string_view path);

// A canonical path cut at its last '/': parent "/a/b" and name "c" for
// "/a/b/c"; parent "/" and name "a" for "/a". Views into the argument.
struct PathSplit {
  std::string_view parent;
  std::string_view name;
};
// Precondition for a meaningful result: `path` is canonical. The root has no
// parent: "/" gives invalid_argument, as does anything validate_path refuses.
Result<PathSplit> split_path(std::string_view path);

// parent + "/" + name, without doubling the slash after the root. Both are
// assumed valid (canonical parent, valid name); the result may exceed
// k_path_bytes_max, which validate_path on it reports.
std::string join_path(std::string_view parent, std::string_view name);

// Components in a canonical path: 0 for "/", 1 for "/a", 3 for "/a/b/c".
std::size_t path_depth(std::string_view path);

// One step of a walk from the root: the directory looked in, the name looked
// up there, and the path reached. All three are views into the walked path
// (the root parent is the path's own leading "/").
struct PathStep {
  std::string_view parent;  // "/" for the first step
  std::string_view name;
  std::string_view path;  // parent joined with name
};

// The walk over a canonical path, one PathStep per component, root first:
// for "/a/b": {"/", "a", "/a"}, then {"/a", "b", "/a/b"}. The walk of "/" is
// empty. This is how a client resolves a path under per-directory placement
// (BeeGFS, Lustre): one lookup per step, each on the shard the previous
// step's directory names. Precondition: `path` is canonical (validate_path);
// a non-canonical path gives an unspecified (but memory-safe) walk.
class PathComponents {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = PathStep;
    using difference_type = std::ptrdiff_t;
    using pointer = const PathStep*;
    using reference = const PathStep&;

    Iterator() = default;
    reference operator*() const { return step_; }
    pointer operator->() const { return &step_; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.end_ == b.end_; }

   private:
    friend class PathComponents;
    Iterator(std::string_view path, std::size_t name_begin);
    void load(std::size_t name_begin);

    std::string_view path_;
    std::size_t end_ = std::string_view::npos;  // end of step_.path; npos = past the last step
    PathStep step_;
  };

  explicit PathComponents(std::string_view path) : path_(path) {}
  Iterator begin() const;
  Iterator end() const { return Iterator(); }

 private:
  std::string_view path_;
};

}  // namespace sluice
