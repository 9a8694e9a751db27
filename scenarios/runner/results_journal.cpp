#include "scenarios/runner/results_journal.hpp"

#include <utility>

namespace sluice::scenario {

ResultsJournal::ResultsJournal(std::string dir, double rewrite_interval_s)
    : dir_(std::move(dir)),
      rewrite_interval_(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(rewrite_interval_s))) {}

Status ResultsJournal::begin_call(std::string_view scenario) {
  scenario_ = scenario;
  current_.clear();
  if (written_) return ok_status();
  return rewrite();
}

Status ResultsJournal::point_done(std::size_t index, const RunResult& result) {
  current_[index] = result;
  dirty_ = true;
  return flush_if_due();
}

void ResultsJournal::end_call(bool ok) {
  if (!ok) return;
  for (auto& [index, result] : current_) earlier_.push_back(std::move(result));
  current_.clear();
}

Status ResultsJournal::flush_if_due() {
  if (!dirty_ || (written_ && Clock::now() - last_write_ < rewrite_interval_)) return ok_status();
  return rewrite();
}

std::vector<RunResult> ResultsJournal::finished() const {
  std::vector<RunResult> all = earlier_;
  for (const auto& [index, result] : current_) all.push_back(result);
  return all;
}

Status ResultsJournal::write_stopped() { return rewrite(); }

Status ResultsJournal::write_final(std::string_view scenario, const std::vector<RunResult>& runs,
                                   const ScriptFindings& findings) {
  dirty_ = false;
  written_ = true;
  last_write_ = Clock::now();
  return write_results(dir_, scenario, runs, findings, Completeness::complete);
}

Status ResultsJournal::rewrite() {
  dirty_ = false;
  written_ = true;
  last_write_ = Clock::now();
  return write_results(dir_, scenario_, finished(), {}, Completeness::incomplete);
}

}  // namespace sluice::scenario
