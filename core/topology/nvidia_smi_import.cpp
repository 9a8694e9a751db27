#include "core/topology/nvidia_smi_import.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/topology/hardware_figures.hpp"
#include "core/topology/machine_assembler.hpp"
#include "core/topology/path_class.hpp"

namespace sluice::topo {
namespace {

struct Line {
  std::size_t number = 0;  // 1-based
  std::vector<std::string> tokens;
};

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

// The number after `prefix` when the whole token is prefix<digits>.
std::optional<std::uint32_t> numbered(std::string_view token, std::string_view prefix) {
  if (token.size() <= prefix.size() || token.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : token.substr(prefix.size())) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0 || value > 100'000) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return value;
}

// The leading NUMA node number of an affinity cell ("3", "0-1", "6-7"); none for "N/A".
std::optional<std::uint32_t> leading_number(std::string_view token) {
  std::uint32_t value = 0;
  std::size_t digits = 0;
  while (digits < token.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(token[digits])) != 0) {
    value = value * 10 + static_cast<std::uint32_t>(token[digits] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return value;
}

struct Cell {
  bool nvlink = false;
  PathClass path_class = PathClass::sys;  // meaningful when !nvlink
};

struct Column {
  std::string header;  // as printed
  bool is_gpu = false;
  std::uint32_t gpu_number = 0;
  std::optional<std::uint32_t> numa;  // declared NUMA affinity (GPUs)
  std::size_t row_line = 0;
};

class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::size_t{0}); }
  std::size_t find(std::size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  std::size_t size() const { return parent_.size(); }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // the smallest member is the root
  }

 private:
  std::vector<std::size_t> parent_;
};

std::string where(std::size_t line, std::size_t column, const std::string& name) {
  return "nvidia-smi topo line " + std::to_string(line) + ", column " + std::to_string(column) + " (" + name + ")";
}

// Groups of the members of `set` by `uf`, ordered by their smallest member.
std::vector<std::vector<std::size_t>> groups(const std::vector<std::size_t>& set, UnionFind& uf) {
  std::map<std::size_t, std::vector<std::size_t>> by_root;
  for (std::size_t d : set) by_root[uf.find(d)].push_back(d);
  std::vector<std::vector<std::size_t>> out;
  for (auto& [root, members] : by_root) out.push_back(std::move(members));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

using Matrix = std::vector<std::vector<Cell>>;  // cells[row][column]

// The non-blank lines of `text`, split into tokens, with their line numbers.
std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  std::size_t number = 0, start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++number;
    auto tokens = split(text.substr(start, end - start));
    if (!tokens.empty()) lines.push_back(Line{number, std::move(tokens)});
    start = end + 1;
  }
  return lines;
}

// The device columns of the header line, and how many affinity fields follow them.
Status read_header(const Line& header, std::vector<Column>& columns, std::size_t& trailing_fields) {
  std::size_t i = 0;
  for (; i < header.tokens.size(); ++i) {
    const std::string& t = header.tokens[i];
    const bool gpu_numa = t == "GPU" && i + 1 < header.tokens.size() && header.tokens[i + 1] == "NUMA";
    if (t == "CPU" || t == "NUMA" || gpu_numa) break;
    Column c;
    c.header = t;
    if (auto n = numbered(t, "GPU")) {
      c.is_gpu = true;
      c.gpu_number = *n;
    }
    for (const auto& other : columns) {
      if (other.header == t) {
        return error(StatusCode::invalid_argument, where(header.number, columns.size() + 1, t) + ": duplicate column");
      }
    }
    columns.push_back(std::move(c));
    if (columns.size() > k_max_topo_devices) {
      return error(StatusCode::invalid_argument,
                   "nvidia-smi topo line " + std::to_string(header.number) + ": more than k_max_topo_devices columns");
    }
  }
  for (; i < header.tokens.size(); ++i) {
    if (header.tokens[i] == "Affinity" || header.tokens[i] == "ID") ++trailing_fields;
  }
  return ok_status();
}

// There is a device column, and the GPU columns are numbered GPU0..GPU<gpus - 1>.
Status check_device_columns(std::size_t header_line, const std::vector<Column>& columns) {
  const std::size_t n = columns.size();
  if (n == 0) {
    return error(StatusCode::invalid_argument,
                 "nvidia-smi topo line " + std::to_string(header_line) + ": no device columns (expected GPU0 ...)");
  }
  std::vector<bool> seen(n, false);
  for (const auto& c : columns) {
    if (c.is_gpu && c.gpu_number < n) seen[c.gpu_number] = true;
  }
  const auto gpus =
      static_cast<std::size_t>(std::count_if(columns.begin(), columns.end(), [](const Column& c) { return c.is_gpu; }));
  for (std::size_t g = 0; g < gpus; ++g) {
    if (!seen[g]) {
      return error(StatusCode::invalid_argument, "nvidia-smi topo line " + std::to_string(header_line) +
                                                     ": GPU columns must be GPU0..GPU" + std::to_string(gpus - 1) +
                                                     ", GPU" + std::to_string(g) + " is missing");
    }
  }
  return ok_status();
}

// Cell `t` of row r, column c (`at` names it in errors).
Result<Cell> parse_cell(const std::string& t, std::size_t r, std::size_t c, const std::string& at,
                        const std::vector<Column>& columns) {
  if (t == "X") {
    if (c != r) return error(StatusCode::invalid_argument, at + ": 'X' (self) off the diagonal");
    return Cell{false, PathClass::loc};
  }
  if (c == r) return error(StatusCode::invalid_argument, at + ": the diagonal must be 'X', found '" + t + "'");
  if (numbered(t, "NV")) {
    if (!columns[r].is_gpu || !columns[c].is_gpu) {
      return error(StatusCode::invalid_argument, at + ": NVLink '" + t + "' between non-GPUs");
    }
    return Cell{true, PathClass::loc};
  }
  auto pc = parse_path_class(t);
  if (!pc.ok() || *pc == PathClass::loc || *pc == PathClass::net) {
    return error(StatusCode::invalid_argument,
                 at + ": unknown cell '" + t + "' (expected X, PIX, PXB, PHB, NODE, SYS or NV#)");
  }
  return Cell{false, *pc};
}

// Row r of the matrix (the row of columns[r]) into `out`; records the row's line and the GPU's NUMA affinity.
Status read_row(const Line& row, std::size_t r, std::size_t trailing_fields, std::vector<Column>& columns,
                std::vector<Cell>& out) {
  const std::size_t n = columns.size();
  Column& col = columns[r];
  col.row_line = row.number;
  if (row.tokens[0] != col.header) {
    return error(StatusCode::invalid_argument, "nvidia-smi topo line " + std::to_string(row.number) +
                                                   ": expected the row of '" + col.header + "', found '" +
                                                   row.tokens[0] + "'");
  }
  const std::size_t given = row.tokens.size() - 1;
  if (given < n || given > n + trailing_fields) {
    return error(StatusCode::invalid_argument,
                 "nvidia-smi topo line " + std::to_string(row.number) + ": row '" + col.header + "' has " +
                     std::to_string(std::min(given, n)) + (given < n ? "" : "+") + " cells, the header has " +
                     std::to_string(n) + " devices and " + std::to_string(trailing_fields) + " affinity fields");
  }
  for (std::size_t c = 0; c < n; ++c) {
    Result<Cell> cell = parse_cell(row.tokens[c + 1], r, c, where(row.number, c + 1, columns[c].header), columns);
    if (!cell.ok()) return cell.status();
    out[c] = *cell;
  }
  if (col.is_gpu && given >= n + 2) col.numa = leading_number(row.tokens[n + 2]);
  return ok_status();
}

Status check_symmetric(const Matrix& cells, const std::vector<Column>& columns) {
  const std::size_t n = columns.size();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < r; ++c) {
      const Cell& a = cells[r][c];
      const Cell& b = cells[c][r];
      if (a.nvlink != b.nvlink || a.path_class != b.path_class) {
        return error(StatusCode::invalid_argument,
                     where(columns[r].row_line, c + 1, columns[c].header) + ": not symmetric with line " +
                         std::to_string(columns[c].row_line) + ", column " + std::to_string(r + 1));
      }
    }
  }
  return ok_status();
}

// The "NIC<n>: <name>" lines from lines[first] on.
std::map<std::string, std::string> read_nic_legend(const std::vector<Line>& lines, std::size_t first) {
  std::map<std::string, std::string> nic_legend;
  for (std::size_t i = first; i < lines.size(); ++i) {
    const auto& t = lines[i].tokens;
    if (t.size() == 2 && t[0].size() > 1 && t[0].back() == ':' && numbered(t[0].substr(0, t[0].size() - 1), "NIC")) {
      nic_legend[t[0].substr(0, t[0].size() - 1)] = t[1];
    }
  }
  return nic_legend;
}

// Which devices share a socket, a root port, a top switch, a leaf switch.
struct DeviceUnions {
  explicit DeviceUnions(std::size_t n) : same_socket(n), same_root(n), same_complex(n), same_switch(n) {}
  UnionFind same_socket, same_root, same_complex, same_switch;
};

DeviceUnions unite_devices(const Matrix& cells, const std::vector<Column>& columns) {
  const std::size_t n = columns.size();
  DeviceUnions u(n);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = r + 1; c < n; ++c) {
      const Cell& cell = cells[r][c];
      if (cell.nvlink) continue;
      if (cell.path_class <= PathClass::node) u.same_socket.unite(r, c);
      if (cell.path_class <= PathClass::phb) u.same_root.unite(r, c);
      if (cell.path_class <= PathClass::pxb) u.same_complex.unite(r, c);
      if (cell.path_class == PathClass::pix) u.same_switch.unite(r, c);
    }
  }
  std::map<std::uint32_t, std::size_t> by_numa;  // GPUs declaring one NUMA node share its socket
  for (std::size_t d = 0; d < n; ++d) {
    if (!columns[d].numa) continue;
    auto [it, fresh] = by_numa.emplace(*columns[d].numa, d);
    if (!fresh) u.same_socket.unite(it->second, d);
  }
  return u;
}

// The devices 0..n-1.
std::vector<std::size_t> all_devices(std::size_t n) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  return all;
}

// The devices grouped by socket, ordered by the smallest NUMA node their GPUs declare.
std::vector<std::vector<std::size_t>> socket_groups(DeviceUnions& u, const std::vector<Column>& columns) {
  auto out = groups(all_devices(columns.size()), u.same_socket);
  const auto declared = [&](const std::vector<std::size_t>& g) {
    std::uint32_t best = k_no_id;
    for (std::size_t d : g) {
      if (columns[d].numa) best = std::min(best, *columns[d].numa);
    }
    return best;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return declared(a) < declared(b); });
  return out;
}

// Sockets, root ports and switches for the groups; the PCIe parent of each device.
std::vector<VertexId> build_pcie_tree(MachineAssembler& m, const std::vector<std::vector<std::size_t>>& sockets_of,
                                      DeviceUnions& u, const NvidiaSmiImportOptions& options, double x16) {
  std::vector<VertexId> parent_of(u.same_socket.size(), k_no_vertex);
  std::vector<VertexId> sockets;
  for (const auto& sg : sockets_of) {
    const VertexId socket = m.add_socket(options.memory_bytes_per_socket, options.memory_bytes_per_s);
    for (VertexId other : sockets) {
      m.link_sockets(other, socket, options.inter_socket_bytes_per_s, k_inter_socket_latency_ns);
    }
    sockets.push_back(socket);
    for (const auto& rg : groups(sg, u.same_root)) {
      const VertexId rp = m.add_root_port(socket, x16);
      for (const auto& cg : groups(rg, u.same_complex)) {
        if (cg.size() == 1) {
          parent_of[cg[0]] = rp;
          continue;
        }
        const VertexId top = m.add_switch(rp, x16);
        const auto leaves = groups(cg, u.same_switch);
        for (const auto& leaf : leaves) {
          const VertexId sw = leaves.size() == 1 ? top : m.add_switch(top, x16);
          for (std::size_t d : leaf) parent_of[d] = sw;
        }
      }
    }
  }
  return parent_of;
}

// The gpus and nics under their parents, in index order (GPUs by number, then NICs by column); their vertices.
std::vector<VertexId> add_devices(MachineAssembler& m, const std::vector<Column>& columns,
                                  const std::vector<VertexId>& parent_of,
                                  const std::map<std::string, std::string>& nic_legend,
                                  const NvidiaSmiImportOptions& options, double x16) {
  const std::size_t n = columns.size();
  std::vector<std::size_t> order = all_devices(n);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (columns[a].is_gpu != columns[b].is_gpu) return columns[a].is_gpu;
    return columns[a].is_gpu && columns[a].gpu_number < columns[b].gpu_number;
  });
  std::vector<VertexId> vertex_of(n, k_no_vertex);
  for (std::size_t d : order) {
    const Column& c = columns[d];
    if (c.is_gpu) {
      vertex_of[d] = m.add_gpu(parent_of[d], x16, options.gpu_memory_bytes, "gpu" + std::to_string(c.gpu_number));
    } else {
      const auto legend = nic_legend.find(c.header);
      vertex_of[d] = m.add_nic(parent_of[d], x16, options.nic_port_rate_bytes_per_s,
                               legend == nic_legend.end() ? c.header : legend->second);
    }
  }
  return vertex_of;
}

// Every PCIe cell must come out of the built tree as written.
Status check_built_paths(const Topology& topology, const Matrix& cells, const std::vector<Column>& columns,
                         const std::vector<VertexId>& vertex_of) {
  const std::size_t n = columns.size();
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      if (r == c || cells[r][c].nvlink) continue;
      auto built = path_class(topology, vertex_of[r], vertex_of[c]);
      if (!built.ok()) return built.status();
      if (*built != cells[r][c].path_class) {
        return error(StatusCode::invalid_argument,
                     where(columns[r].row_line, c + 1, columns[c].header) + ": '" +
                         std::string(to_string(cells[r][c].path_class)) +
                         "' contradicts the other cells (no PCIe tree gives it together with them; built " +
                         std::string(to_string(*built)) + ")");
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<Topology> import_nvidia_smi_topo(std::string_view text, const NvidiaSmiImportOptions& options) {
  if (text.size() > k_max_topo_text_bytes) {
    return error(StatusCode::invalid_argument, "nvidia-smi topo: input exceeds k_max_topo_text_bytes");
  }
  const std::vector<Line> lines = split_lines(text);
  if (lines.empty()) return error(StatusCode::invalid_argument, "nvidia-smi topo: empty input");

  const Line& header = lines[0];
  std::vector<Column> columns;
  std::size_t trailing_fields = 0;
  if (Status st = read_header(header, columns, trailing_fields); !st.ok()) return st;
  if (Status st = check_device_columns(header.number, columns); !st.ok()) return st;
  const std::size_t n = columns.size();

  if (lines.size() < n + 1) {
    return error(StatusCode::invalid_argument, "nvidia-smi topo: the header has " + std::to_string(n) +
                                                   " devices but only " + std::to_string(lines.size() - 1) +
                                                   " rows follow");
  }
  Matrix cells(n, std::vector<Cell>(n));
  for (std::size_t r = 0; r < n; ++r) {
    if (Status st = read_row(lines[r + 1], r, trailing_fields, columns, cells[r]); !st.ok()) return st;
  }
  if (Status st = check_symmetric(cells, columns); !st.ok()) return st;
  const std::map<std::string, std::string> nic_legend = read_nic_legend(lines, n + 1);

  DeviceUnions unions = unite_devices(cells, columns);
  const auto sockets_of = socket_groups(unions, columns);
  MachineAssembler m("nvidia_smi_import");
  const double x16 = pcie_bytes_per_s(options.pcie_gen, 16);
  const std::vector<VertexId> parent_of = build_pcie_tree(m, sockets_of, unions, options, x16);
  const std::vector<VertexId> vertex_of = add_devices(m, columns, parent_of, nic_legend, options, x16);
  if (!m.first_error().ok()) return m.first_error();
  if (Status st = check_built_paths(m.topology(), cells, columns, vertex_of); !st.ok()) return st;
  return m.finish();
}

}  // namespace sluice::topo
