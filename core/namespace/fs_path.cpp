#include "core/namespace/fs_path.hpp"

namespace sluice {

namespace {

// Quotes a user-supplied string for an error message, shortened so that a
// 4 KiB path does not become a 4 KiB log line.
std::string quoted(std::string_view s) {
  constexpr std::size_t k_quote_bytes_max = 64;
  std::string out = "\"";
  if (s.size() <= k_quote_bytes_max) {
    out += s;
  } else {
    out += s.substr(0, k_quote_bytes_max);
    out += "...";
  }
  out += '"';
  return out;
}

Status path_error(std::string_view path, const std::string& problem) {
  return error(StatusCode::invalid_argument, "path " + quoted(path) + ": " + problem);
}

// Checks one component in the context of `path` (for the message).
Status check_component(std::string_view path, std::string_view name) {
  if (name.empty()) return path_error(path, "empty component (repeated or trailing '/')");
  if (name == ".") return path_error(path, "component \".\" is not allowed");
  if (name == "..") return path_error(path, "component \"..\" is not allowed");
  if (name.size() > k_name_bytes_max) {
    return path_error(path, "component " + quoted(name) + " is " + std::to_string(name.size()) +
                                " bytes, more than k_name_bytes_max " + std::to_string(k_name_bytes_max));
  }
  return ok_status();
}

}  // namespace

Status validate_name(std::string_view name) {
  if (name.empty()) return error(StatusCode::invalid_argument, "name is empty");
  if (name == "." || name == "..") {
    return error(StatusCode::invalid_argument, "name " + quoted(name) + " is not allowed");
  }
  if (name.size() > k_name_bytes_max) {
    return error(StatusCode::invalid_argument, "name " + quoted(name) + " is " + std::to_string(name.size()) +
                                                   " bytes, more than k_name_bytes_max " +
                                                   std::to_string(k_name_bytes_max));
  }
  if (name.find('/') != std::string_view::npos) {
    return error(StatusCode::invalid_argument, "name " + quoted(name) + " contains '/'");
  }
  if (name.find('\0') != std::string_view::npos) {
    return error(StatusCode::invalid_argument, "name " + quoted(name) + " contains a NUL byte");
  }
  return ok_status();
}

Status validate_path(std::string_view path) {
  if (path.empty()) return error(StatusCode::invalid_argument, "path is empty");
  if (path.front() != '/') return path_error(path, "not absolute (must start with '/')");
  if (path.size() > k_path_bytes_max) {
    return path_error(
        path, std::to_string(path.size()) + " bytes, more than k_path_bytes_max " + std::to_string(k_path_bytes_max));
  }
  if (path.find('\0') != std::string_view::npos) return path_error(path, "contains a NUL byte");
  if (path.size() == 1) return ok_status();  // the root
  std::size_t begin = 1;
  while (true) {
    const std::size_t slash = path.find('/', begin);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (Status s = check_component(path, path.substr(begin, end - begin)); !s.ok()) return s;
    if (slash == std::string_view::npos) return ok_status();
    begin = slash + 1;
  }
}

Result<std::string> normalize_path(std::string_view path) {
  if (path.empty()) return error(StatusCode::invalid_argument, "path is empty");
  if (path.front() != '/') return path_error(path, "not absolute (must start with '/')");
  if (path.find('\0') != std::string_view::npos) return path_error(path, "contains a NUL byte");
  std::string out;
  out.reserve(path.size() < k_path_bytes_max ? path.size() : k_path_bytes_max);
  std::size_t begin = 0;
  while (begin < path.size()) {
    std::size_t slash = path.find('/', begin);
    if (slash == std::string_view::npos) slash = path.size();
    const std::string_view name = path.substr(begin, slash - begin);
    begin = slash + 1;
    if (name.empty()) continue;  // repeated, leading or trailing slash
    if (Status s = check_component(path, name); !s.ok()) return s;
    out += '/';
    out += name;
    // Checked as we go so that a huge input fails without building a huge string.
    if (out.size() > k_path_bytes_max) {
      return path_error(path,
                        "normalised form is more than k_path_bytes_max " + std::to_string(k_path_bytes_max) + " bytes");
    }
  }
  if (out.empty()) out = "/";
  return out;
}

Result<PathSplit> split_path(std::string_view path) {
  if (Status s = validate_path(path); !s.ok()) return s;
  if (path.size() == 1) return path_error(path, "the root has no parent");
  const std::size_t slash = path.rfind('/');
  PathSplit split;
  split.parent = slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
  split.name = path.substr(slash + 1);
  return split;
}

std::string join_path(std::string_view parent, std::string_view name) {
  std::string out;
  out.reserve(parent.size() + 1 + name.size());
  out += parent;
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

std::size_t path_depth(std::string_view path) {
  if (path.size() <= 1) return 0;
  std::size_t slashes = 0;
  for (const char c : path) slashes += c == '/';
  return slashes;
}

PathComponents::Iterator::Iterator(std::string_view path, std::size_t name_begin) : path_(path) { load(name_begin); }

void PathComponents::Iterator::load(std::size_t name_begin) {
  if (name_begin >= path_.size()) {
    end_ = std::string_view::npos;
    step_ = PathStep{};
    return;
  }
  std::size_t name_end = path_.find('/', name_begin);
  if (name_end == std::string_view::npos) name_end = path_.size();
  // The parent of the first component is the root: the leading "/" itself.
  const std::size_t parent_len = name_begin == 1 ? 1 : name_begin - 1;
  step_.parent = path_.substr(0, parent_len);
  step_.name = path_.substr(name_begin, name_end - name_begin);
  step_.path = path_.substr(0, name_end);
  end_ = name_end;
}

PathComponents::Iterator& PathComponents::Iterator::operator++() {
  if (end_ != std::string_view::npos) load(end_ + 1);
  return *this;
}

PathComponents::Iterator PathComponents::begin() const {
  if (path_.size() <= 1) return Iterator();
  return Iterator(path_, 1);
}

}  // namespace sluice
