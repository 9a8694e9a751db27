#include "scenarios/deploy/socket_bootstrap.hpp"

#include <nlohmann/json.hpp>

namespace sluice::emulate {

Result<std::vector<std::string>> SocketBootstrap::exchange(const std::string& op, const std::string& name,
                                                           const std::string& data) {
  if (data.size() > k_max_bootstrap_item_bytes) {
    return error(StatusCode::invalid_argument, "bootstrap " + op + ": " + std::to_string(data.size()) +
                                                   " bytes over the " + std::to_string(k_max_bootstrap_item_bytes) +
                                                   "-byte limit");
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const nlohmann::json request = {{"op", op}, {"name", name}, {"data", data}};
  if (Status st = channel_.send_line(request.dump(), deadline); !st.ok()) return st;
  Result<std::string> line = channel_.read_line(deadline);
  if (!line.ok()) {
    return error(line.status().code(), "bootstrap " + op + " " + name + ": " + line.status().message());
  }
  Result<std::vector<std::string>> all = parse_collective_answer(*line, "bootstrap " + op, "the launcher");
  if (!all.ok() && all.status().code() == StatusCode::unavailable) {
    return error(StatusCode::unavailable, "bootstrap " + op + " " + name + ": " + all.status().message());
  }
  return all;
}

// A malformed answer is an error, never an uncaught nlohmann exception (issue 24).
Result<std::vector<std::string>> parse_collective_answer(const std::string& text, const std::string& what,
                                                         const std::string& from) {
  const nlohmann::json reply = nlohmann::json::parse(text, nullptr, false);
  const auto malformed = [&] { return error(StatusCode::corrupt, what + ": malformed reply from " + from); };
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("ok") || !reply["ok"].is_boolean()) {
    return malformed();
  }
  if (!reply["ok"].get<bool>()) {
    const bool has_text = reply.contains("error") && reply["error"].is_string();
    return error(StatusCode::unavailable, has_text ? reply["error"].get<std::string>() : std::string("failed"));
  }
  std::vector<std::string> all;
  if (reply.contains("all")) {
    if (!reply["all"].is_array()) return malformed();
    for (const auto& item : reply["all"]) {
      if (!item.is_string()) return malformed();
      all.push_back(item.get<std::string>());
    }
  }
  return all;
}

std::string collective_answer_text(const std::vector<std::string>& all) {
  return nlohmann::json{{"ok", true}, {"all", all}}.dump();
}

std::string collective_failure_text(const std::string& why) {
  return nlohmann::json{{"ok", false}, {"error", why}}.dump();
}

Result<std::vector<std::string>> SocketBootstrap::all_gather(const std::string& mine) {
  Result<std::vector<std::string>> all = exchange("all_gather", "", mine);
  if (all.ok() && all->size() != size_) {
    return error(StatusCode::corrupt, "bootstrap all_gather: " + std::to_string(all->size()) + " items for " +
                                          std::to_string(size_) + " ranks");
  }
  return all;
}

Status SocketBootstrap::barrier(const std::string& name) { return exchange("barrier", name, "").status(); }

Result<std::vector<std::string>> SocketBootstrap::gather_to_root(const std::string& mine) {
  Result<std::vector<std::string>> r = exchange("gather", "", mine);
  if (!r.ok()) return r.status();
  return std::vector<std::string>{};  // the launcher is the root
}

}  // namespace sluice::emulate
