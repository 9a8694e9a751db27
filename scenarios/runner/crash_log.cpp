#include "scenarios/runner/crash_log.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>

#include "core/common/assert.hpp"

namespace sluice::scenario {

struct CrashLog::Ring {
  std::atomic<std::uint64_t> written;  // bytes ever appended; the ring holds the last k_crash_log_bytes
  char data[k_crash_log_bytes];
};

namespace {

CrashLog* g_installed = nullptr;
std::mutex g_installed_mu;  // the child's world logs from several threads (HwWorld)

}  // namespace

CrashLog::CrashLog() {
  void* p = ::mmap(nullptr, sizeof(Ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  ring_ = new (p) Ring{};
  ring_->written.store(0);
}

CrashLog::~CrashLog() {
  if (ring_ == nullptr) return;
  std::lock_guard lock(g_installed_mu);
  if (g_installed == this) g_installed = nullptr;
  ring_->~Ring();
  ::munmap(ring_, sizeof(Ring));
}

void CrashLog::install_in_child() {
  std::lock_guard lock(g_installed_mu);
  g_installed = ok() ? this : nullptr;
}

void CrashLog::append(std::string_view line) {
  if (ring_ == nullptr) return;
  std::uint64_t at = ring_->written.load(std::memory_order_relaxed);
  auto put = [&](char c) {
    ring_->data[at % k_crash_log_bytes] = c;
    ++at;
  };
  const std::string_view kept = line.substr(0, k_crash_log_bytes - 1);
  for (char c : kept) put(c == '\n' ? ' ' : c);
  put('\n');
  ring_->written.store(at, std::memory_order_release);
}

std::vector<std::string> CrashLog::last_lines(std::size_t count) const {
  std::vector<std::string> lines;
  if (ring_ == nullptr || count == 0) return lines;
  const std::uint64_t written = ring_->written.load(std::memory_order_acquire);
  const std::uint64_t held = std::min<std::uint64_t>(written, k_crash_log_bytes);
  std::string text;
  text.reserve(held);
  for (std::uint64_t i = written - held; i < written; ++i) text.push_back(ring_->data[i % k_crash_log_bytes]);
  // A wrapped ring starts inside a line: drop that part.
  std::size_t start = 0;
  if (written > k_crash_log_bytes) start = text.find('\n') == std::string::npos ? text.size() : text.find('\n') + 1;
  for (std::size_t end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
  }
  if (lines.size() > count) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(count));
  SLUICE_ASSERT(lines.size() <= count);
  return lines;
}

void note_child_log(std::string_view line) {
  std::lock_guard lock(g_installed_mu);
  if (g_installed != nullptr) g_installed->append(line);
}

}  // namespace sluice::scenario
