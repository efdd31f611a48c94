// Text I/O helpers: reading a whole file, splitting text into numbered lines
// and CSV fields, reading numbers strictly, and quoting user input in error
// messages in the one form every Tessera parser reports ("<file>:<line>:
// field '<name>': ..."). The library's parsers (profile CSVs, scenario YAML,
// ParvaGPU SLO files, traces, coefficients) use them, and so does the CLI, so
// that flags and files are read and reported the same way.
//
// Contract: no function throws; failures are a Status (ReadTextFile,
// FieldError) or nullopt (ToDouble). Views returned by SplitLines and
// SplitCsvFields point into the caller's text and live as long as it does.
//
// Thread-safety: free functions without state; safe from any thread.
#ifndef TESSERA_TEXT_IO_H_
#define TESSERA_TEXT_IO_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera {

// ReadTextFile: the whole content of the file at `path`, byte for byte (no
// newline translation). NotFound "<path>: no such file or directory" when
// nothing is there; IoError naming the path when it is a directory, cannot be
// opened or the read fails.
Result<std::string> ReadTextFile(const std::string& path);

// One physical line of a text, without its line end, and its 1-based number.
// `text` views the string that was split.
struct TextLine {
  int number = 0;
  std::string_view text;
};

// Whether SplitLines drops a leading UTF-8 byte-order mark (spreadsheets
// write one) or keeps it as part of line 1.
enum class ByteOrderMark { kStrip, kKeep };

// SplitLines: the lines of `text`, numbered from 1. Accepts LF and CRLF line
// ends (one '\r' that ends a line, before '\n' or at the end of `text`, is
// dropped) and a missing final newline; a final newline does not start
// another line, so "" gives no line, "a\n" one and "\n\n" two blank ones.
// Blank lines are kept. With ByteOrderMark::kStrip a leading
// "\xEF\xBB\xBF" is dropped first. The views point into `text`.
std::vector<TextLine> SplitLines(std::string_view text, ByteOrderMark bom);

// Trim: `s` without leading and trailing spaces and tabs (no other byte is
// white space here: a stray '\r' stays visible).
std::string_view Trim(std::string_view s);

// AsciiLower: `s` with A-Z as a-z, every other byte as it is (catalog keys
// and model names are matched case-insensitively).
std::string AsciiLower(std::string_view s);

// IsBlank: true iff `s` holds nothing but spaces and tabs (or nothing).
bool IsBlank(std::string_view s);

// SplitCsvFields: the comma-separated fields of one line, each passed through
// Trim. The formats read here have no quoting: every ',' separates. Always at
// least one field ("" gives {""}, "a," gives {"a", ""}). The views point into
// `line`.
std::vector<std::string_view> SplitCsvFields(std::string_view line);

// ToDouble: the whole of `s` as a double in std::from_chars syntax ("1.5",
// "-2", "6.5e2", "inf", "nan"); nullopt when `s` is empty, has anything
// around the number (" 3 ", "3x", "+3") or is not a number. A value out of a
// double's range rounds as strtod does: "1e400" gives +infinity and "-1e400"
// -infinity (so the caller reports them as not finite), "1e-400" gives 0.
// The result is not checked to be finite.
std::optional<double> ToDouble(std::string_view s);

// ToPort: `s` as a TCP port, 1 to 65,535 in decimal digits and nothing else
// (no sign, no space, at most five digits); nullopt otherwise ("0" too).
std::optional<int> ToPort(std::string_view s);

// EscapeForMessage: `value` as it may appear in an error message, one line
// that cannot act on a terminal: control bytes (below 0x20, 0x7f, and the C1
// controls U+0080-U+009F) and bytes that are not valid UTF-8 written as
// "\xNN" (a stray '\r' or NUL must be visible); valid UTF-8 as it is. More
// than 80 bytes are shortened to the first 80 (at a character boundary)
// followed by "...".
std::string EscapeForMessage(std::string_view value);

// EscapeMessage: a whole message escaped as EscapeForMessage does, but
// neither shortened nor touching '\n' (some messages list one finding per
// line). What the CLI prints goes through it last, so that no message can
// put a raw control byte on a terminal.
std::string EscapeMessage(std::string_view message);

// QuoteForMessage: EscapeForMessage(value) between single quotes.
std::string QuoteForMessage(std::string_view value);

// GroupThousands: `n` with commas between groups of three digits, as counts
// are quoted for people ("8,063", "-72,351").
std::string GroupThousands(long long n);

// FieldError: InvalidArgument "<source>:<line>: field '<field>': <what>", the
// form every parser error takes; `field` goes through EscapeForMessage,
// `what` is used as given.
Status FieldError(std::string_view source, int line, std::string_view field, std::string_view what);

}  // namespace tessera

#endif  // TESSERA_TEXT_IO_H_
