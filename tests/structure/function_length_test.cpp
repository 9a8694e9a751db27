// Function length, a ratchet (issue 21): a function of the sources longer
// than k_max_function_lines fails this test unless tests/structure/
// long_functions.txt lists it, with a length it may not outgrow. The list
// only shrinks: an entry whose function is gone or now short enough fails
// too, so that it is removed. Split a listed function, then remove its line.
//
// The scan is textual: a function is a definition whose signature starts at
// column 0 and whose body ends at the next line starting with '}' (the
// layout of every definition in this tree); its length counts the signature
// and the closing line. Definitions inside a class body (headers' inline
// members) are not measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int k_max_function_lines = 70;
const char* const k_scanned[] = {"core",        "base",       "det",       "sim",     "hw",
                                 "hw_backends", "transports", "scenarios", "analysis"};

struct LongFunction {
  std::string key;  // "path name"
  int lines = 0;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool ends_with(const std::string& s, char c) { return !s.empty() && s.back() == c; }

std::string first_word(const std::string& s) {
  std::istringstream in(s);
  std::string w;
  in >> w;
  return w;
}

// The function's name: the last token before the first '('.
std::string name_of(const std::string& head) {
  const std::string before = trim(head.substr(0, head.find('(')));
  const auto space = before.find_last_of(" \t*&>");
  return space == std::string::npos ? before : before.substr(space + 1);
}

std::vector<LongFunction> functions_of(const std::filesystem::path& file, const std::string& rel) {
  std::vector<std::string> lines;
  {
    std::ifstream in(file);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  std::vector<LongFunction> out;
  int sig_start = -1;
  std::string head;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const std::string& l = lines[i];
    const bool top = !l.empty() && !std::isspace(static_cast<unsigned char>(l[0])) && l[0] != '#' && l[0] != '}' &&
                     l.rfind("//", 0) != 0;
    if (sig_start < 0) {
      if (!top) continue;
      sig_start = i;
      head.clear();
    }
    head += " " + trim(l);
    const std::string s = trim(l);
    // A declaration, or a definition whole on its line(s) ("bool f() { return x; }"):
    // its braces balance, so nothing below belongs to it.
    const auto opens = std::count(head.begin(), head.end(), '{');
    if (ends_with(s, ';') || (ends_with(s, '}') && opens > 0 && opens == std::count(head.begin(), head.end(), '}'))) {
      sig_start = -1;
      continue;
    }
    if (!ends_with(s, '{')) continue;
    const std::string word = first_word(head);
    const bool aggregate = word == "namespace" || word == "extern" || word == "struct" || word == "class" ||
                           word == "enum" || word == "union" || head.find('(') == std::string::npos ||
                           trim(head.substr(0, head.size() - 1)).back() == '=';
    if (aggregate) {
      sig_start = -1;
      continue;
    }
    int end = i + 1;
    while (end < static_cast<int>(lines.size()) && (lines[end].empty() || lines[end][0] != '}')) ++end;
    const int length = end - sig_start + 1;
    if (length > k_max_function_lines) out.push_back({rel + " " + name_of(trim(head)), length});
    i = end;
    sig_start = -1;
  }
  return out;
}

std::map<std::string, int> long_functions_in_tree() {
  std::map<std::string, int> found;
  const std::filesystem::path root(SLUICE_SOURCE_DIR);
  for (const char* folder : k_scanned) {
    if (!std::filesystem::exists(root / folder)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / folder)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".cu")) continue;
      const std::string rel = std::filesystem::relative(entry.path(), root).string();
      for (const LongFunction& f : functions_of(entry.path(), rel)) found[f.key] = std::max(found[f.key], f.lines);
    }
  }
  return found;
}

// tests/structure/long_functions.txt: "path name lines" per line; '#' comments.
std::map<std::string, int> ratchet_list() {
  std::map<std::string, int> listed;
  std::ifstream in(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests/structure/long_functions.txt");
  for (std::string l; std::getline(in, l);) {
    l = trim(l);
    if (l.empty() || l[0] == '#') continue;
    std::istringstream fields(l);
    std::string path, name;
    int lines = 0;
    fields >> path >> name >> lines;
    EXPECT_FALSE(path.empty() || name.empty() || lines <= 0) << "long_functions.txt: bad line: " << l;
    listed[path + " " + name] = lines;
  }
  return listed;
}

TEST(FunctionLength, NoFunctionOutgrowsTheLimitOrItsRatchetEntry) {
  const std::map<std::string, int> found = long_functions_in_tree();
  const std::map<std::string, int> listed = ratchet_list();
  if (std::getenv("SLUICE_PRINT_LONG_FUNCTIONS") != nullptr) {  // the list as the tree has it now
    for (const auto& [key, lines] : found) std::printf("%s %d\n", key.c_str(), lines);
  }
  std::string problems;
  for (const auto& [key, lines] : found) {
    auto it = listed.find(key);
    if (it == listed.end()) {
      problems +=
          key + ": " + std::to_string(lines) + " lines, over " + std::to_string(k_max_function_lines) + ": split it\n";
    } else if (lines > it->second) {
      problems += key + ": " + std::to_string(lines) + " lines, grew past its ratchet entry (" +
                  std::to_string(it->second) + "): split it\n";
    }
  }
  for (const auto& [key, lines] : listed) {
    if (found.count(key) == 0) {
      problems += key + ": listed but no longer over " + std::to_string(k_max_function_lines) +
                  " lines (or gone): remove it from tests/structure/long_functions.txt\n";
    }
  }
  EXPECT_TRUE(problems.empty()) << problems;
}

TEST(FunctionLength, TheRatchetListIsShorterThanAtItsStart) {
  // 38 functions were over 70 lines when issue 21 was filed; the list may only shrink.
  EXPECT_LT(ratchet_list().size(), 38u);
}

TEST(FunctionLength, TheScanFindsDefinitions) {
  // Guards against a scan that passes vacuously: a long test-only fixture.
  const std::filesystem::path probe = std::filesystem::temp_directory_path() / "sluice_function_length_probe.cpp";
  {
    std::ofstream out(probe);
    out << "namespace x {\n\nStatus Thing::long_one(int a,\n                       int b) {\n";
    for (int i = 0; i < 80; ++i) out << "  ++a;\n";
    out << "}\n\nint short_one() {\n  return 1;\n}\n\nstruct S {\n  int f() { return 2; }\n};\n}  // namespace x\n";
  }
  const std::vector<LongFunction> found = functions_of(probe, "probe.cpp");
  std::filesystem::remove(probe);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "probe.cpp Thing::long_one");
  EXPECT_EQ(found[0].lines, 83);
}

}  // namespace
