// The table of files embedded in the binary, generated at build time by
// cmake/embed_files.cmake (CMakeLists.txt lists the files); read it through
// FindAsset (include/tessera/control/control_assets.h).
//
// Thread-safety: constant data.
#ifndef TESSERA_CONTROL_EMBEDDED_TABLE_H_
#define TESSERA_CONTROL_EMBEDDED_TABLE_H_

#include <cstddef>
#include <span>

namespace tessera::control_internal {

struct EmbeddedEntry {
  const char* name;            // "web/index.html", "openapi.json", ...
  const unsigned char* bytes;  // followed by a NUL not counted in size
  std::size_t size;
};

// Every embedded file, sorted as CMake listed them.
std::span<const EmbeddedEntry> EmbeddedEntries();

}  // namespace tessera::control_internal

#endif  // TESSERA_CONTROL_EMBEDDED_TABLE_H_
