#include "scenarios/cli/command.hpp"

#include <fmt/core.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace sluice::cli {

void on_parsed(CLI::App* command, CommandExit& exit, std::function<int()> run) {
  command->callback([&exit, run = std::move(run)] {
    try {
      exit.code = run();
    } catch (const UsageError& e) {
      fmt::print(stderr, "sluice: {}\n", e.what());
      exit.code = k_exit_usage;
    } catch (const std::exception& e) {
      fmt::print(stderr, "sluice: {}\n", e.what());
      exit.code = k_exit_failed;
    }
  });
}

int run_command_line(CLI::App& app, CommandExit& exit, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? k_exit_ok : k_exit_usage;
  }
  return exit.code;
}

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw UsageError(path + ": cannot read: " + ec.message());
  if (size > k_max_input_file_bytes) {
    throw UsageError(path + ": " + std::to_string(size) + " bytes is larger than the " +
                     std::to_string(k_max_input_file_bytes) + "-byte input limit");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> parse_sets(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> parsed;
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("--set " + set + ": expected name=value");
    parsed[set.substr(0, eq)] = set.substr(eq + 1);
  }
  return parsed;
}

[[noreturn]] void throw_script_status(const Status& s) {
  if (s.code() == StatusCode::invalid_argument) throw UsageError(s.message());
  throw std::runtime_error(s.to_string());
}

}  // namespace sluice::cli
