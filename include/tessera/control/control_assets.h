// Control assets: the files `tessera serve` serves from memory, embedded in
// the binary at build time (CMakeLists.txt, cmake/embed_files.cmake):
//   "web/<file>"          every file of src/control/web/ (the dashboard)
//   "openapi.json"        docs/openapi.json (GET /v1/openapi.json)
//   "scenarios/s3.yaml"   the default scenario of a new store
//
// Errors: none; an unknown name is nullopt.
// Thread-safety: constant data; call from any thread.
#ifndef TESSERA_CONTROL_ASSETS_H_
#define TESSERA_CONTROL_ASSETS_H_

#include <optional>
#include <string_view>

namespace tessera {

struct Asset {
  std::string_view bytes;
  // From the name's extension: "text/html; charset=utf-8", "application/json",
  // ...; "application/octet-stream" for an unknown one.
  std::string_view content_type;
};

std::optional<Asset> FindAsset(std::string_view name);

}  // namespace tessera

#endif  // TESSERA_CONTROL_ASSETS_H_
