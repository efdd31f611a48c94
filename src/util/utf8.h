// InvalidUtf8At / IsValidUtf8: where a byte string stops being well-formed
// UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
// so that names read from files can be written back (YAML, JSON) byte for
// byte; Utf8Error words it for messages without echoing the bad bytes.
//
// Thread-safety: a pure function.
#ifndef TESSERA_UTIL_UTF8_H_
#define TESSERA_UTIL_UTF8_H_

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera {

// The offset of the first byte that starts no valid UTF-8 sequence, or
// std::string_view::npos when `s` is valid throughout.
inline size_t InvalidUtf8At(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;        // continuation bytes
    unsigned lo = 0x80;  // range of the first continuation byte
    unsigned hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (s.size() - i <= n) return i;
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xBFu)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

inline bool IsValidUtf8(std::string_view s) { return InvalidUtf8At(s) == std::string_view::npos; }

// "must be valid UTF-8; byte 3 (0xff) is not"; REQUIRES: !IsValidUtf8(s).
inline std::string Utf8Error(std::string_view s) {
  const size_t at = InvalidUtf8At(s);
  return fmt::format("must be valid UTF-8; byte {} (0x{:02x}) is not", at + 1,
                     static_cast<unsigned char>(s[at]));
}

}  // namespace tessera

#endif  // TESSERA_UTIL_UTF8_H_
