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
}

void PhaseRecorder::op(std::uint64_t bytes, TimeNs issued_ns) {
  const TimeNs now = env_.now();
  result_.bytes += bytes;
  ++result_.ops;
  last_op_ns_ = std::max(last_op_ns_, now);
  if (bytes > 0) env_.metrics().count(prefix_ + "bytes", static_cast<double>(bytes));
  env_.metrics().count(prefix_ + "ops", 1);
  env_.metrics().sample(prefix_ + "op_latency_ns", static_cast<double>(now - issued_ns));
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
  return result_;
}

}  // namespace sluice
