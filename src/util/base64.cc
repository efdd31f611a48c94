// Base64 (util/base64.h).
#include "util/base64.h"

#include <fmt/format.h>

#include <cstdint>

#include "tessera/util/text_io.h"

namespace tessera {

std::string EncodeBase64(std::string_view data) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  const auto byte = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<uint8_t>(data[at]));
  };
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out.push_back(kDigits[(v >> shift) & 63]);
  }
  if (i + 1 == data.size()) {
    const uint32_t v = byte(i) << 16;
    out += {kDigits[(v >> 18) & 63], kDigits[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == data.size()) {
    const uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8);
    out += {kDigits[(v >> 18) & 63], kDigits[(v >> 12) & 63], kDigits[(v >> 6) & 63], '='};
  }
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view text, std::string* why) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int nbits = 0;
  int digits = 0;
  int padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    int value;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else {
      *why = fmt::format("not base64: byte {} at offset {}", QuoteForMessage(std::string(1, c)), i);
      return std::nullopt;
    }
    if (padding > 0) {
      *why = fmt::format("not base64: data after '=' padding at offset {}", i);
      return std::nullopt;
    }
    bits = (bits << 6) | static_cast<uint32_t>(value);
    nbits += 6;
    ++digits;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (digits % 4 == 1 || padding > 2 || (padding > 0 && (digits + padding) % 4 != 0)) {
    *why = "not base64: truncated (its length is not a whole number of 4-character groups)";
    return std::nullopt;
  }
  return out;
}

}  // namespace tessera
