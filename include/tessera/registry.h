// NamedRegistry: a name-keyed table of factories, the one registry shape every
// pluggable policy family shares (offline planners, online placers).
//
// A family instantiates it with its interface and the arguments its factories
// take, e.g. NamedRegistry<Planner> or NamedRegistry<OnlinePlacer, const
// PlacerOptions&>. `kind` ("planner", "policy") names the family in errors.
//
// An entry may take typed options, as kube-scheduler plugins take their args:
// it is asked for by a spec "NAME:KEY=VALUE[,KEY=VALUE...]" (e.g.
// "parva:mps=off"), and its factory reads each option with the typed readers
// below (BoolOption, IntOption, ChoiceOption), so that a bad value is an
// error naming the entry, the option and what it accepts. An alias names a
// spec ("parva-single" is "parva:mps=off") and says so in its description;
// what it makes carries the alias's name.
//
// Thread-safety: Register() is not synchronised; a filled registry is
// read-only and safe from any thread.
#ifndef TESSERA_REGISTRY_H_
#define TESSERA_REGISTRY_H_

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// The options of a spec, by key: "parva:mps=off" gives {"mps": "off"}.
using RegistryOptions = std::map<std::string, std::string, std::less<>>;

// A spec split: its name and its options. InvalidArgument naming `kind` and
// the spec when an option is not KEY=VALUE or a key is given twice.
struct RegistrySpec {
  std::string name;
  RegistryOptions options;
};
Result<RegistrySpec> ParseRegistrySpec(std::string_view kind, std::string_view spec);

// "NAME" or "NAME:K1=V1,K2=V2" with the keys in order: the name of what a
// spec makes, the same however its options were ordered.
std::string FormatRegistrySpec(const RegistrySpec& spec);

// The typed readers of an option: `fallback` when absent, else the value;
// InvalidArgument "<kind> <name>: option <key>: expected ..., got '<v>'".
// `what` is the entry's "<kind> <name>" for messages.
Result<bool> BoolOption(std::string_view what, const RegistryOptions& options, std::string_view key,
                        bool fallback);  // on|off|true|false
Result<int> IntOption(std::string_view what, const RegistryOptions& options, std::string_view key,
                      int fallback, int min, int max);
// One of `choices`; `fallback` empty makes the option required.
Result<std::string> ChoiceOption(std::string_view what, const RegistryOptions& options,
                                 std::string_view key, std::string_view fallback,
                                 std::initializer_list<std::string_view> choices);

template <typename Interface, typename... Args>
class NamedRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(Args...)>;
  // A factory of an entry with options: the name what it makes carries (the
  // entry's, an alias's, or the spec written canonically), the options
  // (only the entry's keys reach it) and the family's arguments.
  using OptionsFactory = std::function<Result<std::unique_ptr<Interface>>(
      const std::string& name, const RegistryOptions& options, Args...)>;

  explicit NamedRegistry(std::string kind) : kind_(std::move(kind)) {}

  // InvalidArgument if `name` is empty, already registered, or `factory` empty.
  Status Register(std::string name, std::string description, Factory factory) {
    if (!factory) return Status::InvalidArgument(kind_ + " '" + name + "' has no factory");
    Entry entry;
    entry.description = std::move(description);
    entry.factory = std::move(factory);
    return Add(std::move(name), std::move(entry));
  }

  // An entry taking the options `keys`. Unless `listed`, Names() leaves it
  // out: an entry whose options have no defaults is asked for by its
  // aliases, or by a spec.
  Status RegisterWithOptions(std::string name, std::string description,
                             std::vector<std::string> keys, OptionsFactory factory,
                             bool listed = true) {
    if (!factory) return Status::InvalidArgument(kind_ + " '" + name + "' has no factory");
    Entry entry;
    entry.description = std::move(description);
    entry.options_factory = std::move(factory);
    entry.keys = std::move(keys);
    entry.listed = listed;
    return Add(std::move(name), std::move(entry));
  }

  // `alias` makes what `spec` makes, named `alias`; its description says
  // which spec it is.
  Status RegisterAlias(std::string alias, std::string spec, std::string description) {
    Result<RegistrySpec> parsed = ParseRegistrySpec(kind_, spec);
    if (!parsed.ok()) return parsed.status();
    auto target = entries_.find(parsed->name);
    if (target == entries_.end() || !target->second.options_factory) {
      return Status::InvalidArgument(kind_ + " alias '" + alias + "': '" + parsed->name +
                                     "' takes no options");
    }
    Entry entry;
    entry.description = spec + ": " + description;
    entry.alias_of = std::move(*parsed);
    return Add(std::move(alias), std::move(entry));
  }

  // The Register* calls for the built-in lists: a failure there (a duplicate
  // name) is a bug that every test run catches, so it aborts with the message.
  void MustRegister(std::string name, std::string description, Factory factory) {
    Must(Register(std::move(name), std::move(description), std::move(factory)));
  }
  void MustRegisterWithOptions(std::string name, std::string description,
                               std::vector<std::string> keys, OptionsFactory factory,
                               bool listed = true) {
    Must(RegisterWithOptions(std::move(name), std::move(description), std::move(keys),
                             std::move(factory), listed));
  }
  void MustRegisterAlias(std::string alias, std::string spec, std::string description) {
    Must(RegisterAlias(std::move(alias), std::move(spec), std::move(description)));
  }

  // Ok when `spec` names a registered entry with options it takes (their
  // values are the factory's to judge, at Create); else NotFound listing the
  // registered names, or InvalidArgument naming the option. Makes nothing.
  Status Check(std::string_view spec) const {
    Result<Resolved> resolved = Resolve(spec);
    return resolved.ok() ? Status::Ok() : resolved.status();
  }

  // What `spec` names, made: NotFound listing the registered names when its
  // name is unknown; InvalidArgument for an option the entry does not take
  // or a value its factory refuses.
  Result<std::unique_ptr<Interface>> Create(std::string_view spec, Args... args) const {
    TESSERA_ASSIGN_OR_RETURN(Resolved r, Resolve(spec));
    if (r.entry->factory) return r.entry->factory(std::forward<Args>(args)...);
    return r.entry->options_factory(r.name, r.options, std::forward<Args>(args)...);
  }

  // Names one may ask for by name alone, sorted: plain entries, aliases and
  // listed entries with options.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) {
      if (entry.listed) names.push_back(name);
    }
    return names;
  }

  // Names(), separated by ", " (for help texts and errors).
  std::string JoinedNames() const {
    std::string joined;
    for (const std::string& name : Names()) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
  }

  // One-line description of `name` (empty if unknown); an alias's starts
  // with the spec it stands for.
  std::string Description(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? std::string() : it->second.description;
  }

  // The options entry `name` takes (none for a plain entry or an alias).
  std::vector<std::string> Options(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? std::vector<std::string>() : it->second.keys;
  }

 private:
  struct Entry {
    std::string description;
    Factory factory;                       // a plain entry
    OptionsFactory options_factory;        // an entry with options
    std::vector<std::string> keys;         // its options
    std::optional<RegistrySpec> alias_of;  // an alias
    bool listed = true;
  };
  // The entry that makes what a spec asks for, the name it gets, and its options.
  struct Resolved {
    const Entry* entry = nullptr;
    std::string name;
    RegistryOptions options;
  };

  Status Add(std::string name, Entry entry) {
    if (name.empty()) return Status::InvalidArgument("a " + kind_ + " needs a name");
    if (name.find_first_of(":,=") != std::string::npos) {
      return Status::InvalidArgument(kind_ + " '" + name + "': a name has no ':', ',' or '='");
    }
    if (entries_.count(name)) {
      return Status::InvalidArgument(kind_ + " '" + name + "' is already registered");
    }
    entries_.emplace(std::move(name), std::move(entry));
    return Status::Ok();
  }

  void Must(const Status& s) const {
    if (s.ok()) return;
    std::cerr << "tessera: " << s.ToString() << "\n";
    std::abort();
  }

  Result<Resolved> Resolve(std::string_view text) const {
    TESSERA_ASSIGN_OR_RETURN(RegistrySpec spec, ParseRegistrySpec(kind_, text));
    auto it = entries_.find(spec.name);
    if (it == entries_.end()) {
      return Status::NotFound("unknown " + kind_ + " '" + spec.name + "' (known: " + JoinedNames() +
                              ")");
    }
    const Entry& entry = it->second;
    if (entry.alias_of) {
      if (!spec.options.empty()) {
        return Status::InvalidArgument(kind_ + " '" + spec.name + "' is " +
                                       FormatRegistrySpec(*entry.alias_of) + ": give options to " +
                                       entry.alias_of->name);
      }
      const Entry& target = entries_.find(entry.alias_of->name)->second;
      return Resolved{&target, spec.name, entry.alias_of->options};
    }
    if (entry.factory) {
      if (!spec.options.empty()) {
        return Status::InvalidArgument(kind_ + " '" + spec.name + "' takes no options, got '" +
                                       std::string(text) + "'");
      }
      return Resolved{&entry, spec.name, {}};
    }
    for (const auto& [key, value] : spec.options) {
      if (std::find(entry.keys.begin(), entry.keys.end(), key) == entry.keys.end()) {
        std::string known;
        for (const std::string& k : entry.keys) known += (known.empty() ? "" : ", ") + k;
        return Status::InvalidArgument(kind_ + " " + spec.name + ": unknown option '" + key +
                                       "' (options: " + known + ")");
      }
    }
    std::string name = FormatRegistrySpec(spec);
    return Resolved{&entry, std::move(name), std::move(spec.options)};
  }

  std::string kind_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace tessera

#endif  // TESSERA_REGISTRY_H_
