#include "hw_backends/hwloc/hwloc_loader.hpp"

#include "hw_backends/hwloc/hwloc_topology_handle.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "base/fd_io.hpp"

// Present when a sanitizer runtime is linked in (weak: absent otherwise).
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

namespace sluice::hw {
namespace {

// Wire format on the socket pair (both ends are this file, in one build):
// request = RequestHeader + xml bytes; reply = ReplyHeader + payload (the
// re-exported XML when loaded, the reason when refused).
struct RequestHeader {
  std::uint64_t xml_bytes;
};
enum ReplyCode : std::uint32_t { k_reply_loaded = 1, k_reply_refused = 2 };
struct ReplyHeader {
  std::uint32_t code;
  std::uint32_t reserved;
  std::uint64_t payload_bytes;
};

// What the loader printed while serving one request, kept for the error
// message (libhwloc says why before it aborts; ASan says why it stopped).
constexpr std::size_t k_said_bytes_max = 2048;
// Nesting of hwloc objects a loaded topology may have: a real machine has
// about ten levels of CPU objects and a PCIe tree a few bridges deep; the
// caller's import walks the tree recursively.
constexpr int k_max_object_depth = 64;

using TopologyHandle = HwlocTopology;

// The number stored in an hwloc enum field. hwloc's XML reader stores any
// number it parses there (bridge_type="2-1"), and loading an enum outside its
// enumerators is undefined behaviour in C++.
template <typename Enum>
unsigned enum_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(unsigned));
  unsigned v = 0;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

std::string set_error(const char* what, const char* type, const char* problem) {
  return std::string("hwloc import: a ") + type + " object's " + what + " " + problem;
}

// The bounds the header promises on every object below `o` (see there).
Status check_object(hwloc_obj_t o, int depth) {
  const char* type = hwloc_obj_type_string(o->type);
  if (depth > k_max_object_depth) {
    return error(StatusCode::invalid_argument,
                 "hwloc import: objects nest deeper than " + std::to_string(k_max_object_depth) + " levels");
  }
  const std::pair<const char*, hwloc_const_bitmap_t> sets[] = {{"cpuset", o->cpuset},
                                                               {"complete_cpuset", o->complete_cpuset},
                                                               {"nodeset", o->nodeset},
                                                               {"complete_nodeset", o->complete_nodeset}};
  for (const auto& [what, set] : sets) {
    if (set == nullptr || hwloc_bitmap_iszero(set)) continue;
    const int last = hwloc_bitmap_last(set);
    if (last < 0) return error(StatusCode::invalid_argument, set_error(what, type, "is infinite"));
    if (static_cast<unsigned>(last) > k_hwloc_max_set_index) {
      return error(
          StatusCode::invalid_argument,
          set_error(what, type, ("has index " + std::to_string(last) + ", above k_hwloc_max_set_index").c_str()));
    }
  }
  if ((o->type == HWLOC_OBJ_PU || o->type == HWLOC_OBJ_NUMANODE) && o->os_index > k_hwloc_max_set_index) {
    return error(StatusCode::invalid_argument,
                 std::string("hwloc import: a ") + type + " object has no os_index or one above k_hwloc_max_set_index");
  }
  if (o->type == HWLOC_OBJ_BRIDGE) {
    const unsigned up = enum_value(o->attr->bridge.upstream_type);
    const unsigned down = enum_value(o->attr->bridge.downstream_type);
    if ((up != HWLOC_OBJ_BRIDGE_HOST && up != HWLOC_OBJ_BRIDGE_PCI) || down != HWLOC_OBJ_BRIDGE_PCI) {
      return error(StatusCode::invalid_argument, "hwloc import: a bridge has an unknown bridge_type " +
                                                     std::to_string(up) + "-" + std::to_string(down));
    }
  }
  if (o->type == HWLOC_OBJ_OS_DEVICE && enum_value(o->attr->osdev.type) > HWLOC_OBJ_OSDEV_COPROC) {
    return error(StatusCode::invalid_argument, "hwloc import: an OS device has an unknown osdev_type " +
                                                   std::to_string(enum_value(o->attr->osdev.type)));
  }
  for (hwloc_obj_t first : {o->first_child, o->memory_first_child, o->io_first_child, o->misc_first_child}) {
    for (hwloc_obj_t c = first; c != nullptr; c = c->next_sibling) {
      if (Status s = check_object(c, depth + 1); !s.ok()) return s;
    }
  }
  return Status{};
}

Status check_topology(hwloc_topology_t t) { return check_object(hwloc_get_root_obj(t), 0); }

// In the loader process: load, check, re-export, load the re-export, check it.
Result<std::string> load_and_reexport(const std::string& xml) {
  std::string canonical;
  {
    TopologyHandle first;
    if (!first.ok()) return error(StatusCode::internal, "hwloc import: hwloc_topology_init failed");
    if (Status s = load_checked_hwloc_xml(first.get(), xml); !s.ok()) return s;
    if (Status s = check_topology(first.get()); !s.ok()) return s;
    char* out = nullptr;
    int out_bytes = 0;
    if (hwloc_topology_export_xmlbuffer(first.get(), &out, &out_bytes, 0) != 0 || out_bytes <= 0) {
      return error(StatusCode::invalid_argument, "hwloc import: libhwloc could not re-export the topology it loaded");
    }
    const auto bytes = static_cast<std::size_t>(out_bytes - 1);  // without the NUL
    if (bytes <= k_max_hwloc_xml_bytes) canonical.assign(out, bytes);
    hwloc_free_xmlbuffer(first.get(), out);
    if (bytes > k_max_hwloc_xml_bytes) {
      return error(StatusCode::invalid_argument, "hwloc import: re-exported XML exceeds k_max_hwloc_xml_bytes");
    }
  }
  TopologyHandle second;
  if (!second.ok()) return error(StatusCode::internal, "hwloc import: hwloc_topology_init failed");
  if (Status s = load_checked_hwloc_xml(second.get(), canonical); !s.ok()) {
    return error(StatusCode::invalid_argument, "hwloc import: libhwloc cannot load its own re-export: " + s.message());
  }
  if (Status s = check_topology(second.get()); !s.ok()) return s;
  return canonical;
}

// VmData of this process (what RLIMIT_DATA counts), 0 when /proc cannot say.
std::size_t data_bytes() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[4096];
  std::size_t n = 0;
  for (;;) {
    const ssize_t r = ::read(fd, text + n, sizeof text - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<std::size_t>(r);
    if (n == sizeof text - 1) break;
  }
  ::close(fd);
  text[n] = '\0';
  const char* line = std::strstr(text, "\nVmData:");
  if (line == nullptr) return 0;
  return static_cast<std::size_t>(std::strtoull(line + 8, nullptr, 10)) * k_kib;
}

// Moves `fd` to `target` (dup2 leaves the copy without FD_CLOEXEC).
bool move_fd(int fd, int target) { return fd == target || ::dup2(fd, target) == target; }

// The loader process: serves requests on fd 0 until EOF, reports on fd 1/2.
[[noreturn]] void serve(int socket_fd, int said_fd, pid_t parent, const HwlocLoaderLimits& limits) {
  ::setpgid(0, 0);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(0);
  // Default dispositions (the caller's handlers, e.g. a sanitizer's or
  // libFuzzer's, would turn a crash into something else) and nothing blocked:
  // a crash or abort ends only this process, by its signal.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Likewise a sanitizer's death callback is the caller's: libFuzzer's would
  // save the input it was running when this process was forked as a crash-*
  // file when the sanitizer ends this process (an allocation past the memory
  // bound). The sanitizer's own report still comes to the caller.
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  // fd 0: the socket; fds 1 and 2: the said pipe; nothing else of the
  // caller's stays open here (a kept socket or pipe end would outlive the
  // caller's close of it).
  const int s = ::fcntl(socket_fd, F_DUPFD, 3);
  const int w = ::fcntl(said_fd, F_DUPFD, 3);
  if (s < 0 || w < 0 || !move_fd(s, 0) || !move_fd(w, 1) || !move_fd(w, 2)) ::_exit(3);
  if (::close_range(3, ~0U, 0) != 0) {
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  }
  rlimit data{};
  const bool can_bound = ::getrlimit(RLIMIT_DATA, &data) == 0;
  const rlim_t data_unbounded = data.rlim_cur;
  for (;;) {
    RequestHeader request{};
    if (!read_exact(0, &request, sizeof request)) ::_exit(0);  // the caller closed: done
    if (request.xml_bytes == 0 || request.xml_bytes > k_max_hwloc_xml_bytes) ::_exit(4);
    std::string xml(static_cast<std::size_t>(request.xml_bytes), '\0');
    if (!read_exact(0, xml.data(), xml.size())) ::_exit(0);
    // This load's memory: the bound above what the loader holds now.
    const std::size_t now = data_bytes();
    if (can_bound && now > 0) {
      const std::size_t budget = limits.memory_bytes + limits.memory_bytes_per_xml_byte * xml.size();
      rlimit bounded = data;
      bounded.rlim_cur =
          std::min(static_cast<rlim_t>(now + budget), data.rlim_cur);  // never above the caller's own limit
      ::setrlimit(RLIMIT_DATA, &bounded);
    }
    ReplyHeader reply{k_reply_loaded, 0, 0};
    std::string payload;
    try {
      Result<std::string> loaded = load_and_reexport(xml);
      if (loaded.ok()) {
        payload = std::move(loaded).value();
      } else {
        reply.code = k_reply_refused;
        payload = loaded.status().message();
      }
    } catch (const std::bad_alloc&) {
      reply.code = k_reply_refused;
      payload = "hwloc import: the XML needs more memory than the loader's bound";
    }
    if (can_bound) {
      rlimit restored = data;
      restored.rlim_cur = data_unbounded;
      ::setrlimit(RLIMIT_DATA, &restored);
    }
    reply.payload_bytes = payload.size();
    if (!write_exact(0, &reply, sizeof reply) || !write_exact(0, payload.data(), payload.size())) ::_exit(0);
  }
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\0')) text.pop_back();
  return text;
}

// Keeps up to k_said_bytes_max of what the loader printed; reads what is there now.
// Returns false at EOF (the loader is gone).
bool drain_said(int fd, std::string& said) {
  char chunk[4096];
  for (;;) {
    const ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return true;  // EAGAIN: nothing more now
    if (r == 0) return false;
    const std::size_t room = k_said_bytes_max - std::min(said.size(), k_said_bytes_max);
    said.append(chunk, std::min(room, static_cast<std::size_t>(r)));
  }
}

}  // namespace

Status load_checked_hwloc_xml(hwloc_topology_t topology, const std::string& xml) {
  if (hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
    return error(StatusCode::internal, "hwloc import: cannot keep I/O objects (hwloc_topology_set_io_types_filter)");
  }
  // hwloc wants the terminating NUL counted in the length.
  if (hwloc_topology_set_xmlbuffer(topology, xml.c_str(), static_cast<int>(xml.size() + 1)) != 0) {
    return error(StatusCode::invalid_argument,
                 std::string("hwloc import: hwloc rejected the XML (malformed or not a hwloc topology): ") +
                     std::strerror(errno));
  }
  if (hwloc_topology_load(topology) != 0) {
    return error(StatusCode::invalid_argument,
                 std::string("hwloc import: hwloc could not load the XML topology: ") + std::strerror(errno));
  }
  return Status{};
}

HwlocLoader::HwlocLoader(HwlocLoaderLimits limits) : limits_(limits), owner_(::getpid()) {
  // An empty topology held for the loader's lifetime keeps libhwloc's
  // component registry (and its dlopen()ed plugins) loaded: without it every
  // hwloc_topology_init loads the plugins again (~2.5 ms) and every destroy
  // unloads them. Only a speed-up: without it loads still work.
  if (hwloc_topology_init(&keeper_) != 0) keeper_ = nullptr;
}

HwlocLoader::~HwlocLoader() {
  if (::getpid() != owner_) return;  // a fork of the owner exiting: not its loader to stop
  stop();
  if (keeper_ != nullptr) hwloc_topology_destroy(keeper_);
}

Status HwlocLoader::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return error(StatusCode::internal, std::string("hwloc import: socketpair: ") + std::strerror(errno));
  }
  int said[2];
  if (::pipe2(said, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return error(StatusCode::internal, std::string("hwloc import: pipe: ") + std::strerror(e));
  }
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    for (int fd : {sv[0], sv[1], said[0], said[1]}) ::close(fd);
    return error(StatusCode::internal, std::string("hwloc import: fork: ") + std::strerror(e));
  }
  if (child == 0) serve(sv[1], said[1], parent, limits_);
  ::close(sv[1]);
  ::close(said[1]);
  for (int fd : {sv[0], said[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  pid_ = child;
  socket_fd_ = sv[0];
  said_fd_ = said[0];
  loads_by_current_ = 0;
  ++processes_started_;
  return Status{};
}

int HwlocLoader::stop() {
  int wstatus = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);  // also when it has exited already: a zombie ignores it
    while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  for (int* fd : {&socket_fd_, &said_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  pid_ = -1;
  return wstatus;
}

bool HwlocLoader::alive() {
  if (pid_ <= 0) return false;
  int wstatus = 0;
  const pid_t r = ::waitpid(pid_, &wstatus, WNOHANG);
  if (r == 0) return true;
  pid_ = -1;  // exited (reaped now) or not ours to wait for any more
  stop();
  return false;
}

Result<std::string> HwlocLoader::load(std::string_view xml) {
  if (xml.empty()) return error(StatusCode::invalid_argument, "hwloc import: empty XML");
  if (xml.size() > k_max_hwloc_xml_bytes) {
    return error(StatusCode::invalid_argument, "hwloc import: XML exceeds k_max_hwloc_xml_bytes");
  }
  if (!alive()) {
    if (Status s = start(); !s.ok()) return s;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(limits_.timeout_ms);
  const RequestHeader request{xml.size()};
  std::size_t sent = 0;
  const std::size_t to_send = sizeof request + xml.size();
  char header_in[sizeof(ReplyHeader)];
  std::size_t header_got = 0;
  ReplyHeader reply{};
  std::string payload;
  std::string said;
  bool said_open = true;
  bool timed_out = false;
  bool broken = false;  // the loader went away or broke the protocol
  bool protocol_error = false;
  for (;;) {
    const bool have_header = header_got == sizeof header_in;
    if (have_header && payload.size() == reply.payload_bytes) break;
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfds[2] = {{socket_fd_, static_cast<short>(sent < to_send ? POLLIN | POLLOUT : POLLIN), 0},
                      {said_open ? said_fd_ : -1, POLLIN, 0}};
    const int ready = ::poll(pfds, 2, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      broken = true;
      break;
    }
    if (said_open && (pfds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) said_open = drain_said(said_fd_, said);
    if (sent < to_send && (pfds[0].revents & POLLOUT) != 0) {
      const char* from =
          sent < sizeof request ? reinterpret_cast<const char*>(&request) + sent : xml.data() + (sent - sizeof request);
      const std::size_t n = sent < sizeof request ? sizeof request - sent : to_send - sent;
      const ssize_t w = ::send(socket_fd_, from, n, MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<std::size_t>(w);
      } else if (w < 0 && errno != EINTR && errno != EAGAIN) {
        broken = true;  // the loader is gone; its exit status says how
        break;
      }
    }
    if ((pfds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      char chunk[65536];
      char* to = have_header ? chunk : header_in + header_got;
      std::size_t want = have_header
                             ? std::min(sizeof chunk, static_cast<std::size_t>(reply.payload_bytes) - payload.size())
                             : sizeof header_in - header_got;
      const ssize_t r = ::read(socket_fd_, to, want);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0) {
        broken = true;
        break;
      }
      if (have_header) {
        payload.append(chunk, static_cast<std::size_t>(r));
      } else {
        header_got += static_cast<std::size_t>(r);
        if (header_got == sizeof header_in) {
          std::memcpy(&reply, header_in, sizeof reply);
          if ((reply.code != k_reply_loaded && reply.code != k_reply_refused) ||
              reply.payload_bytes > k_max_hwloc_xml_bytes || sent < to_send) {
            protocol_error = true;
            break;
          }
          payload.reserve(static_cast<std::size_t>(reply.payload_bytes));
        }
      }
    }
  }
  if (said_open) drain_said(said_fd_, said);  // all it printed before its reply is in the pipe by now
  said = trimmed(std::move(said));
  if (timed_out || broken || protocol_error) {
    const int wstatus = stop();
    if (timed_out) {
      return error(StatusCode::invalid_argument, "hwloc import: libhwloc did not load the XML within the time bound (" +
                                                     std::to_string(limits_.timeout_ms) +
                                                     " ms): it is malformed or absurd");
    }
    if (protocol_error)
      return error(StatusCode::internal, "hwloc import: the XML loader process broke the reply protocol");
    if (wstatus != -1 && WIFSIGNALED(wstatus)) {
      return error(StatusCode::invalid_argument, "hwloc import: libhwloc gave up on the XML (signal " +
                                                     std::to_string(WTERMSIG(wstatus)) +
                                                     (said.empty() ? "" : ": " + said) + "): it is malformed");
    }
    if (wstatus != -1 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
      // A sanitizer's report (an allocation past the memory bound) ends the
      // loader with an exit status instead of a signal.
      return error(StatusCode::invalid_argument, "hwloc import: the XML loader process stopped (exit " +
                                                     std::to_string(WEXITSTATUS(wstatus)) + ") on the XML" +
                                                     (said.empty() ? "" : ": " + said));
    }
    return error(StatusCode::internal,
                 "hwloc import: the XML loader process went away" + (said.empty() ? "" : ": " + said));
  }
  if (++loads_by_current_ >= limits_.loads_per_process) stop();
  if (reply.code == k_reply_refused) {
    return error(StatusCode::invalid_argument, said.empty() ? payload : payload + " (libhwloc: " + said + ")");
  }
  return payload;
}

}  // namespace sluice::hw
