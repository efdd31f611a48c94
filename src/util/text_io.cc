#include "tessera/util/text_io.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace tessera {

Result<std::string> ReadTextFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound(path + ": no such file or directory");
  if (fs::is_directory(st)) return Status::IoError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open for reading");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return Status::IoError(path + ": read failed");
  return content.str();
}

std::vector<TextLine> SplitLines(std::string_view text, ByteOrderMark bom) {
  if (bom == ByteOrderMark::kStrip && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<TextLine> lines;
  int number = 1;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back({number++, line});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsBlank(std::string_view s) { return Trim(s).empty(); }

std::vector<std::string_view> SplitCsvFields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const size_t comma = line.find(',');
    fields.push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

std::optional<double> ToDouble(std::string_view s) {
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || end != s.data() + s.size()) return std::nullopt;
  // from_chars reports 1e400 and 1e-400 as out of range: they are numbers,
  // and strtod rounds them to +-infinity or to zero with the right sign.
  if (ec == std::errc::result_out_of_range) return std::strtod(std::string(s).c_str(), nullptr);
  if (ec != std::errc()) return std::nullopt;
  return value;
}

std::optional<int> ToPort(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return std::nullopt;
  return value;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0
// when it does not start one (a stray continuation byte, an overlong or
// surrogate form, a code point past U+10FFFF, a cut sequence).
size_t Utf8Length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

// `value` with every byte that could act on a terminal escaped as "\xNN":
// C0 controls, DEL, C1 controls (U+0080-U+009F) and bytes that are not
// valid UTF-8; '\n' is kept when `keep_newline` (whole messages). Stops after `max` bytes of
// `value` (at a character boundary) and says whether it did.
std::string Escape(std::string_view value, size_t max, bool keep_newline, bool& cut) {
  std::string out;
  size_t i = 0;
  while (i < value.size() && i < max) {
    const std::string_view rest = value.substr(i);
    const auto b0 = static_cast<unsigned char>(rest[0]);
    const size_t n = Utf8Length(rest);
    const bool c1 = n == 2 && b0 == 0xC2 && static_cast<unsigned char>(rest[1]) <= 0x9F;
    if (n == 1 && (b0 >= 0x20 || (keep_newline && rest[0] == '\n')) && b0 != 0x7f) {
      out += rest[0];
      i += 1;
    } else if (n > 1 && !c1) {
      out.append(rest.substr(0, n));
      i += n;
    } else {
      const size_t bytes = c1 ? 2 : 1;
      for (size_t k = 0; k < bytes; ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(rest[k]));
      }
      i += bytes;
    }
  }
  cut = i < value.size();
  return out;
}

}  // namespace

std::string EscapeForMessage(std::string_view value) {
  constexpr size_t kMax = 80;
  bool cut = false;
  std::string out = Escape(value, kMax, /*keep_newline=*/false, cut);
  return cut ? out + "..." : out;
}

std::string EscapeMessage(std::string_view message) {
  bool cut = false;
  return Escape(message, message.size(), /*keep_newline=*/true, cut);
}

std::string QuoteForMessage(std::string_view value) { return "'" + EscapeForMessage(value) + "'"; }

std::string GroupThousands(long long n) {
  std::string digits = std::to_string(n);
  const int first = n < 0 ? 1 : 0;  // keep a minus sign out of the groups
  for (int i = static_cast<int>(digits.size()) - 3; i > first; i -= 3) digits.insert(i, ",");
  return digits;
}

Status FieldError(std::string_view source, int line, std::string_view field,
                  std::string_view what) {
  return Status::InvalidArgument(
      fmt::format("{}:{}: field '{}': {}", source, line, EscapeForMessage(field), what));
}

}  // namespace tessera
