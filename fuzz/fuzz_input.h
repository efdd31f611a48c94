// Helpers shared by the libFuzzer harnesses (one per parser, fuzz/*.cc):
// the input as text, and as a file for parsers that read paths. A harness
// only checks that a parser returns (a value or an error Status) without
// crashing, hanging or tripping a sanitizer; the sanitizers do the rest.
#ifndef TESSERA_FUZZ_FUZZ_INPUT_H_
#define TESSERA_FUZZ_FUZZ_INPUT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

namespace tessera::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits the input at its first NUL byte: two files' worth of text.
inline std::pair<std::string_view, std::string_view> TwoParts(std::string_view text) {
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return {text, {}};
  return {text.substr(0, nul), text.substr(nul + 1)};
}

// Writes `text` to a file of this process (the same path every call) and
// returns its path.
inline std::string AsFile(std::string_view text, const char* tag) {
  const std::string path = "/tmp/tessera-fuzz-" + std::to_string(::getpid()) + "-" + tag;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), text.size());
  return path;
}

}  // namespace tessera::fuzz

#endif  // TESSERA_FUZZ_FUZZ_INPUT_H_
