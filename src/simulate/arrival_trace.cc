// LoadArrivalTrace (arrivals.h): a recorded request trace, one request per
// row, for `tessera simulate --arrivals trace:FILE`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/simulate/arrivals.h"
#include "tessera/util/text_io.h"

namespace tessera {
namespace {

using Trace = std::map<std::string, std::vector<double>>;

constexpr std::string_view kHeaderHelp = "'service,time_s'";

Status CheckHeader(std::string_view source, const std::vector<TextLine>& lines) {
  if (lines.empty()) {
    return FieldError(source, 1, "header", fmt::format("empty file, expected {}", kHeaderHelp));
  }
  const std::vector<std::string_view> names = SplitCsvFields(lines[0].text);
  if (names.size() != 2 || names[0] != "service" || names[1] != "time_s") {
    return FieldError(
        source, lines[0].number, "header",
        fmt::format("expected {}, got {}", kHeaderHelp, QuoteForMessage(lines[0].text)));
  }
  return Status::Ok();
}

// Adds the request of one data row to `trace`.
Status AddRow(std::string_view source, const TextLine& line, Trace& trace) {
  const std::vector<std::string_view> fields = SplitCsvFields(line.text);
  if (fields.size() != 2) {
    return FieldError(source, line.number, "row",
                      fmt::format("{} fields but the header has 2: {}", fields.size(),
                                  QuoteForMessage(line.text)));
  }
  if (fields[0].empty()) return FieldError(source, line.number, "service", "must not be empty");
  const std::optional<double> t = ToDouble(fields[1]);
  // A time past a double's range reads as infinity: it is refused here, not
  // left to stall the simulated clock.
  if (!t || !std::isfinite(*t) || *t < 0) {
    return FieldError(
        source, line.number, "time_s",
        fmt::format("must be a finite number >= 0 (seconds), got {}", QuoteForMessage(fields[1])));
  }
  trace[std::string(fields[0])].push_back(*t == 0 ? 0.0 : *t);  // "-0" is 0
  return Status::Ok();
}

Result<Trace> ParseArrivalTrace(std::string_view text, std::string_view source) {
  const std::vector<TextLine> lines = SplitLines(text, ByteOrderMark::kStrip);
  TESSERA_RETURN_IF_ERROR(CheckHeader(source, lines));
  Trace trace;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (IsBlank(lines[i].text)) continue;  // holds no request; nothing is dropped
    TESSERA_RETURN_IF_ERROR(AddRow(source, lines[i], trace));
  }
  if (trace.empty()) {
    // A trace without requests would simulate nothing and report every
    // service as idle: almost surely the wrong file.
    return FieldError(
        source, lines.back().number, "row",
        fmt::format("no requests: expected rows of {} after the header", kHeaderHelp));
  }
  // Rows may come in any order (a merged log); ArrivalStream replays ascending times.
  for (auto& [service, times] : trace) std::sort(times.begin(), times.end());
  return trace;
}

}  // namespace

Result<Trace> LoadArrivalTrace(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseArrivalTrace(text, path);
}

}  // namespace tessera
