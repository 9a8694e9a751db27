#include "sim/sim_env.hpp"

#include "sim/sim_runtime.hpp"

namespace sluice::sim {

TimeNs SimEnv::now() const { return runtime_.now(); }
void SimEnv::log(LogLevel level, std::string_view message) { runtime_.log(slot_, level, message); }
Status SimEnv::send(Endpoint to, proto::Message message) { return runtime_.send(slot_, to, std::move(message)); }
OpId SimEnv::transfer(const TransferSpec& spec) { return runtime_.handed_out(slot_, runtime_.transfer(slot_, spec)); }
OpId SimEnv::storage_io(const StorageIoSpec& spec) {
  return runtime_.handed_out(slot_, runtime_.storage_io(slot_, spec));
}
OpId SimEnv::compute(CostKind kind, std::uint64_t units) {
  return runtime_.handed_out(slot_, runtime_.compute(slot_, kind, units));
}
OpId SimEnv::timer(TimeNs delay_ns) { return runtime_.handed_out(slot_, runtime_.timer(slot_, delay_ns)); }
OpId SimEnv::checksum(const MemHandle& range) {
  return runtime_.handed_out(slot_, runtime_.memory_op(slot_, range, "checksum range"));
}
OpId SimEnv::fill(const MemHandle& range, const PatternSpec&) {
  return runtime_.handed_out(slot_, runtime_.memory_op(slot_, range, "fill range"));
}
OpId SimEnv::verify(const MemHandle& range, const PatternSpec&) {
  return runtime_.handed_out(slot_, runtime_.memory_op(slot_, range, "verify range"));
}
Result<MemHandle> SimEnv::alloc(MemKind kind, std::uint16_t device, std::uint64_t bytes) {
  return runtime_.alloc(slot_, kind, device, bytes);
}
void SimEnv::free(const MemHandle& region) { runtime_.free(region); }
Result<MemHandle> SimEnv::open_window(const MemHandle& range) { return runtime_.open_window(slot_, range); }
void SimEnv::close_window(const MemHandle& window) { runtime_.free(window); }
void SimEnv::count(std::string_view name, double delta) { runtime_.count(name, delta); }
void SimEnv::sample(std::string_view name, double value) { runtime_.sample(name, value); }

}  // namespace sluice::sim
