#include "tessera/text_io.h"

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

std::string EscapeForMessage(std::string_view value) {
  constexpr size_t kMax = 80;
  std::string out;
  for (char c : value.substr(0, kMax)) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  return value.size() > kMax ? out + "..." : out;
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
