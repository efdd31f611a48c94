#include "tessera/registry.h"

#include <fmt/format.h>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

Status BadValue(std::string_view what, std::string_view key, std::string_view expected,
                std::string_view got) {
  return Status::InvalidArgument(
      fmt::format("{}: option {}: expected {}, got {}", what, key, expected, QuoteForMessage(got)));
}

}  // namespace

Result<RegistrySpec> ParseRegistrySpec(std::string_view kind, std::string_view text) {
  RegistrySpec spec;
  const size_t colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (colon == std::string_view::npos) return spec;
  const auto malformed = [&] {
    return Status::InvalidArgument(fmt::format(
        "{} {}: expected NAME or NAME:KEY=VALUE[,KEY=VALUE...]", kind, QuoteForMessage(text)));
  };
  std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) return malformed();
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) return malformed();
    const std::string key(item.substr(0, eq));
    if (!spec.options.emplace(key, std::string(item.substr(eq + 1))).second) {
      return Status::InvalidArgument(
          fmt::format("{} {}: option {} given twice", kind, QuoteForMessage(text), key));
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return spec;
}

std::string FormatRegistrySpec(const RegistrySpec& spec) {
  std::string out = spec.name;
  char separator = ':';
  for (const auto& [key, value] : spec.options) {  // a std::map: keys in order
    out += separator + key + "=" + value;
    separator = ',';
  }
  return out;
}

Result<bool> BoolOption(std::string_view what, const RegistryOptions& options, std::string_view key,
                        bool fallback) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  if (it->second == "on" || it->second == "true") return true;
  if (it->second == "off" || it->second == "false") return false;
  return BadValue(what, key, "on or off", it->second);
}

Result<int> IntOption(std::string_view what, const RegistryOptions& options, std::string_view key,
                      int fallback, int min, int max) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  const std::optional<double> value = ToDouble(it->second);
  if (!value || *value != static_cast<int>(*value) || *value < min || *value > max) {
    return BadValue(what, key, fmt::format("an integer in [{}, {}]", min, max), it->second);
  }
  return static_cast<int>(*value);
}

Result<std::string> ChoiceOption(std::string_view what, const RegistryOptions& options,
                                 std::string_view key, std::string_view fallback,
                                 std::initializer_list<std::string_view> choices) {
  std::string listed;
  for (std::string_view c : choices) listed += (listed.empty() ? "" : ", ") + std::string(c);
  auto it = options.find(key);
  if (it == options.end()) {
    if (!fallback.empty()) return std::string(fallback);
    return Status::InvalidArgument(
        fmt::format("{}: option {} is required (one of {})", what, key, listed));
  }
  for (std::string_view c : choices) {
    if (it->second == c) return it->second;
  }
  return BadValue(what, key, "one of " + listed, it->second);
}

}  // namespace tessera
