// What every command of the programs (sluice, sluice-node) shares: one way
// to dispatch. Each command file adds its options and a callback that runs
// it (on_parsed); the callback keeps the command's exit code in the
// program's CommandExit, and run_command_line returns it: no command ends
// the process itself, and main() holds no list of commands to ask whether
// they were parsed.
//
// Exit codes, every command: 0 ok, 1 the command (or a run) failed, 2 usage
// error, bad input or an error in a script; `run` stopped by SIGINT/SIGTERM:
// 128 + the signal (130/143).
#pragma once

// GCC 12 at -O2 reports a false -Wnull-dereference inside the std::string
// moves CLI::detail::split inlines (an error in CI): CLI11 is included here,
// under the pragma, and every file of cli/ includes it through this header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/common/status.hpp"

namespace sluice::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_failed = 1;
inline constexpr int k_exit_usage = 2;
// `sluice run` stopped by a signal exits 128 + its number (130 SIGINT, 143 SIGTERM), as shells report it.
inline constexpr int k_exit_signal_base = 128;
// The largest input file a command reads whole (a machine capture).
inline constexpr std::uintmax_t k_max_input_file_bytes = 64ULL << 20;

// A failure the user caused (bad name, bad file): exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The exit code of the command that ran.
struct CommandExit {
  int code = k_exit_ok;
};

// When `command` (a subcommand of the program) is parsed, runs `run` and
// keeps its exit code in `exit`; a UsageError is exit 2, any other
// exception exit 1, each said on stderr as "sluice: <what>".
void on_parsed(CLI::App* command, CommandExit& exit, std::function<int()> run);

// Parses the command line (the callbacks run the chosen command) and returns
// the exit code: the command's, or CLI11's for --help and usage errors.
int run_command_line(CLI::App& app, CommandExit& exit, int argc, char** argv);

// The whole of a file the user named; UsageError when it cannot be read or
// is larger than k_max_input_file_bytes.
std::string read_input_file(const std::string& path);

// --set name=value, repeatable; UsageError naming the bad one.
std::map<std::string, std::string> parse_sets(const std::vector<std::string>& sets);

// A script error ("file:line: ...", invalid_argument) is the user's: a
// UsageError (exit 2); another failure a runtime_error (exit 1).
[[noreturn]] void throw_script_status(const Status& s);

}  // namespace sluice::cli
