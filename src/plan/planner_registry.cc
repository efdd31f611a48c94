#include <utility>

#include "tessera/planner.h"

namespace tessera {

Status PlannerRegistry::Register(std::string name, std::string description,
                                 PlannerFactory factory) {
  if (name.empty()) return Status::InvalidArgument("a planner needs a name");
  if (!factory) return Status::InvalidArgument("planner '" + name + "' has no factory");
  if (entries_.count(name)) {
    return Status::InvalidArgument("planner '" + name + "' is already registered");
  }
  entries_.emplace(std::move(name), Entry{std::move(description), std::move(factory)});
  return Status::Ok();
}

Result<std::unique_ptr<Planner>> PlannerRegistry::Create(std::string_view name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string known;
    for (const auto& [n, e] : entries_) known += (known.empty() ? "" : ", ") + n;
    return Status::NotFound("unknown planner '" + std::string(name) + "' (known: " + known + ")");
  }
  return it->second.factory();
}

std::vector<std::string> PlannerRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

std::string PlannerRegistry::Description(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? std::string() : it->second.description;
}

}  // namespace tessera
