// NamedRegistry: a name-keyed table of factories, the one registry shape every
// pluggable policy family shares (offline planners, online placers).
//
// A family instantiates it with its interface and the arguments its factories
// take, e.g. NamedRegistry<Planner> or NamedRegistry<OnlinePlacer, const
// PlacerOptions&>. `kind` ("planner", "policy") names the family in errors.
//
// Thread-safety: Register() is not synchronised; a filled registry is
// read-only and safe from any thread.
#ifndef TESSERA_REGISTRY_H_
#define TESSERA_REGISTRY_H_

#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/status.h"

namespace tessera {

template <typename Interface, typename... Args>
class NamedRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(Args...)>;

  explicit NamedRegistry(std::string kind) : kind_(std::move(kind)) {}

  // InvalidArgument if `name` is empty, already registered, or `factory` empty.
  Status Register(std::string name, std::string description, Factory factory) {
    if (name.empty()) return Status::InvalidArgument("a " + kind_ + " needs a name");
    if (!factory) return Status::InvalidArgument(kind_ + " '" + name + "' has no factory");
    if (entries_.count(name)) {
      return Status::InvalidArgument(kind_ + " '" + name + "' is already registered");
    }
    entries_.emplace(std::move(name), Entry{std::move(description), std::move(factory)});
    return Status::Ok();
  }

  // Register() for the built-in lists: a failure there (a duplicate name) is
  // a bug that every test run catches, so it aborts with the message.
  void MustRegister(std::string name, std::string description, Factory factory) {
    const Status s = Register(std::move(name), std::move(description), std::move(factory));
    if (!s.ok()) {
      std::cerr << "tessera: " << s.ToString() << "\n";
      std::abort();
    }
  }

  // Ok when `name` is registered; else NotFound listing the registered
  // names (what Create answers for it), without making anything.
  Status Check(std::string_view name) const {
    if (entries_.find(name) != entries_.end()) return Status::Ok();
    return Status::NotFound("unknown " + kind_ + " '" + std::string(name) +
                            "' (known: " + JoinedNames() + ")");
  }

  // NotFound listing the registered names when `name` is unknown.
  Result<std::unique_ptr<Interface>> Create(std::string_view name, Args... args) const {
    TESSERA_RETURN_IF_ERROR(Check(name));
    return entries_.find(name)->second.factory(std::forward<Args>(args)...);
  }

  // Registered names, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) names.push_back(name);
    return names;
  }

  // Registered names, sorted, separated by ", " (for help texts and errors).
  std::string JoinedNames() const {
    std::string joined;
    for (const auto& [name, entry] : entries_) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
  }

  // One-line description of `name` (empty if unknown).
  std::string Description(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? std::string() : it->second.description;
  }

 private:
  struct Entry {
    std::string description;
    Factory factory;
  };
  std::string kind_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace tessera

#endif  // TESSERA_REGISTRY_H_
