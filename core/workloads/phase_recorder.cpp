#include "core/workloads/phase_recorder.hpp"

#include <algorithm>
#include <utility>

namespace sluice {

PhaseRecorder::PhaseRecorder(Env& env, std::string workload, std::string phase, std::uint32_t rank)
    : env_(env), prefix_(workload + "." + phase + ".") {
  result_.phase = std::move(phase);
  result_.rank = rank;
}

void PhaseRecorder::start() {
  started_ns_ = env_.now();
  last_op_ns_ = started_ns_;
  progress_.clear();
  progress_width_ns_ = k_progress_first_width_ns;
}

void PhaseRecorder::op(std::uint64_t bytes, TimeNs issued_ns) {
  const TimeNs now = env_.now();
  result_.bytes += bytes;
  ++result_.ops;
  last_op_ns_ = std::max(last_op_ns_, now);
  if (bytes > 0) env_.metrics().count(prefix_ + "bytes", static_cast<double>(bytes));
  env_.metrics().count(prefix_ + "ops", 1);
  env_.metrics().sample(prefix_ + "op_latency_ns", static_cast<double>(now - issued_ns));
  if (bytes == 0) return;
  std::size_t window = static_cast<std::size_t>(std::max<TimeNs>(now - started_ns_, 0) / progress_width_ns_);
  while (window >= k_max_progress_windows) {  // the phase outgrew the series: halve its resolution
    for (std::size_t i = 0; i < progress_.size(); ++i) {
      const std::uint64_t v = progress_[i];
      progress_[i] = 0;
      progress_[i / 2] += v;
    }
    progress_.resize((progress_.size() + 1) / 2);
    progress_width_ns_ *= 2;
    window /= 2;
  }
  if (window >= progress_.size()) progress_.resize(window + 1, 0);
  progress_[window] += bytes;
}

void PhaseRecorder::touch() {
  last_op_ns_ = std::max(last_op_ns_, env_.now());
  touched_ = true;
}

void PhaseRecorder::count(const std::string& name, double delta) { env_.metrics().count(prefix_ + name, delta); }

void PhaseRecorder::sample(const std::string& name, double value) { env_.metrics().sample(prefix_ + name, value); }

RankPhaseResult PhaseRecorder::finish() {
  result_.elapsed_ns = result_.ops == 0 && !touched_ ? 0 : last_op_ns_ - started_ns_;
  env_.metrics().sample(prefix_ + "elapsed_ns", static_cast<double>(result_.elapsed_ns));
  const std::string progress = prefix_ + "progress_bytes." + std::to_string(progress_width_ns_) + ".";
  for (std::size_t k = 0; k < progress_.size(); ++k) {
    if (progress_[k] > 0) env_.metrics().count(progress + std::to_string(k), static_cast<double>(progress_[k]));
  }
  return result_;
}

}  // namespace sluice
