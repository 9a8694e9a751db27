// Registry<Entry>: named plug-ins that register themselves, are listed with
// their probes' verdicts and are looked up by name. One shape for every plug
// point of the mechanism folders: transports (transports/transport.hpp,
// TransportEntry) and storage backends (hw_backends/storage_backend.hpp,
// StorageBackendEntry). As fio's engines or UCX's components: no central
// list; each plug-in's own folder adds its entry from a static initialiser
// (its library linked whole-archive), so a registry lives in a
// function-local static of its plug point (any static-initialisation order).
//
// Entry: a copyable struct with at least
//   std::string name;                // unique in its registry, not empty
//   std::function<Status()> probe;   // ok, or unavailable with the reason; empty = always ok
// and whatever else its plug point needs (factories, capabilities).
//
// Locking: a mutex guards the map of entries only. Every function of an
// entry (probe, factory, capabilities) is called on a copy of it, outside
// the lock: a probe may be slow (it opens devices, asks a driver, loads a
// library) and would hold up every other lookup meanwhile, and it may call
// back into the registry (an entry built on another one asks about it:
// tests/hw_backends/wrapped_tcp_transport.hpp), which under the lock would
// deadlock on the non-recursive mutex. All calls are thread-safe.
#pragma once

#include <concepts>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/common/assert.hpp"
#include "core/common/status.hpp"

namespace sluice::base {

template <class E>
concept RegistryEntry = std::copy_constructible<E> && requires(const E& e) {
  { e.name } -> std::convertible_to<std::string_view>;
  {static_cast<bool>(e.probe)};
  { e.probe() } -> std::convertible_to<Status>;
};

template <RegistryEntry Entry>
class Registry {
 public:
  // `kind` names what is registered, in messages: "transport", "storage backend".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Adds `entry`. Names are unique: a second entry of a taken name is
  // refused with already_exists (the first one stays); an empty name is
  // invalid_argument.
  Status add(Entry entry) {
    if (std::string_view(entry.name).empty()) {
      return error(StatusCode::invalid_argument, kind_ + " registry: an entry needs a name");
    }
    std::lock_guard lock(mu_);
    if (entries_.contains(std::string_view(entry.name))) {
      return error(StatusCode::already_exists, kind_ + " registry: a second " + kind_ + " named '" +
                                                   std::string(entry.name) +
                                                   "' is refused (names are unique; the first one stays)");
    }
    std::string name(entry.name);
    entries_.emplace(std::move(name), std::move(entry));
    return ok_status();
  }

  // add() for a plug-in's static registrar. A refused entry there is a bug
  // of the build (two plug-ins of one name), so the process aborts with
  // add()'s message (SLUICE_ASSERT, in every build type). Returns true, to
  // initialise the registrar's static.
  bool add_or_abort(Entry entry) {
    const Status added = add(std::move(entry));
    SLUICE_ASSERT_MSG(added.ok(), added.message());
    return true;
  }

  // A copy of the named entry. not_found: no such name (the message lists
  // the names there are).
  Result<Entry> find(std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string names;
      for (const auto& [known, entry] : entries_) names += (names.empty() ? "" : ", ") + known;
      return error(StatusCode::not_found, kind_ + " registry: no " + kind_ + " named '" + std::string(name) +
                                              "' (registered: " + (names.empty() ? "none" : names) + ")");
    }
    return it->second;
  }

  // The named entry when its probe passes (run outside the lock): not_found
  // as find(); unavailable "<kind> '<name>' unavailable: <the probe's reason>".
  Result<Entry> find_available(std::string_view name) const {
    Result<Entry> entry = find(name);
    if (!entry.ok()) return entry;
    const Status probe = probe_of(*entry);
    if (!probe.ok()) {
      return error(StatusCode::unavailable, kind_ + " '" + std::string(name) + "' unavailable: " + probe.message());
    }
    return entry;
  }

  // The named entry's create(args...), called outside the lock, when its
  // probe passes; else find_available()'s error (the factory's result type
  // must be constructible from a Status, as Result<T> is).
  template <class... Args, class E = Entry>  // E: only a registry whose entries have create() has it
  auto create(std::string_view name, Args&&... args) const
      -> decltype(std::declval<const E&>().create(std::forward<Args>(args)...)) {
    Result<Entry> entry = find_available(name);
    if (!entry.ok()) return entry.status();
    return entry->create(std::forward<Args>(args)...);
  }

  struct Listed {
    Entry entry;
    Status probe;  // the entry's probe verdict (ok when it has no probe)
  };

  // Every entry, sorted by name, with its probe's verdict. The probes run
  // outside the lock, one after another, on a snapshot: an entry added
  // meanwhile appears in the next listing.
  std::vector<Listed> list() const {
    std::vector<Listed> out;
    for (Entry& entry : snapshot()) {
      Status probe = probe_of(entry);
      out.push_back(Listed{std::move(entry), std::move(probe)});
    }
    return out;
  }

  // list() as the rows a plug point shows (`sluice backends`): a Listing
  // with name, available, why_unavailable and capabilities, the last from
  // the entry's `capabilities` function when it has one (called outside the
  // lock, as the probes).
  template <class Listing>
  std::vector<Listing> list_as() const {
    std::vector<Listing> out;
    for (auto& [entry, probe] : list()) {
      Listing listing;
      listing.name = entry.name;
      listing.available = probe.ok();
      listing.why_unavailable = probe.ok() ? "" : probe.message();
      if (entry.capabilities) listing.capabilities = entry.capabilities();
      out.push_back(std::move(listing));
    }
    return out;
  }

  // Copies of every entry, sorted by name.
  std::vector<Entry> snapshot() const {
    std::lock_guard lock(mu_);
    std::vector<Entry> out;
    out.reserve(entries_.size());
    for (const auto& [name, entry] : entries_) out.push_back(entry);
    return out;
  }

  const std::string& kind() const { return kind_; }

 private:
  static Status probe_of(const Entry& entry) { return entry.probe ? Status(entry.probe()) : ok_status(); }

  const std::string kind_;
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace sluice::base
