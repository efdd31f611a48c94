#include "tessera/control/control_assets.h"

#include <array>
#include <utility>

#include "control/embedded_table.h"

namespace tessera {
namespace {

std::string_view ContentTypeOf(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
      {".yaml", "application/yaml"},
      {".map", "application/json"},
  }};
  for (const auto& [extension, type] : kTypes)
    if (name.ends_with(extension)) return type;
  return "application/octet-stream";
}

}  // namespace

std::optional<Asset> FindAsset(std::string_view name) {
  for (const control_internal::EmbeddedEntry& entry : control_internal::EmbeddedEntries()) {
    if (name != entry.name) continue;
    return Asset{std::string_view(reinterpret_cast<const char*>(entry.bytes), entry.size),
                 ContentTypeOf(name)};
  }
  return std::nullopt;
}

}  // namespace tessera
