#include "tessera/workload/day_rates.h"

#include <algorithm>
#include <map>

#include "tessera/util/text_io.h"

namespace tessera {

double DayRates::PeakOf(int s, int from, int to) const {
  double peak = 0;
  for (int m = std::max(from, 0); m < std::min(to, minutes()); ++m)
    peak = std::max(peak, rps[m][s]);
  return peak;
}

std::vector<std::vector<double>> DayRates::ByService() const {
  std::vector<std::vector<double>> out(services.size(), std::vector<double>(rps.size()));
  for (size_t m = 0; m < rps.size(); ++m) {
    for (size_t s = 0; s < services.size(); ++s) out[s][m] = rps[m][s];
  }
  return out;
}

Result<DayRates> ParseDayRates(std::string_view text, const std::string& source,
                               const Scenario& scenario) {
  DayRates day;
  day.source = source;
  for (const Service& service : scenario.services) day.services.push_back(service.name);
  const auto file_error = [&](std::string_view what) {
    return Status::InvalidArgument(source + ": " + std::string(what));
  };

  std::vector<std::string> header;
  int header_line = 0;
  // column (after `minute`) -> scenario service index; empty with a shape.
  std::vector<int> column_service;
  for (const TextLine& line : SplitLines(text, ByteOrderMark::kStrip)) {
    const std::string_view trimmed = Trim(line.text);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const std::vector<std::string_view> fields = SplitCsvFields(line.text);
    if (header.empty()) {
      header_line = line.number;
      for (std::string_view f : fields) header.emplace_back(f);
      if (header.front() != "minute") {
        return FieldError(
            source, line.number, header.front(),
            "the first column must be 'minute', got " + QuoteForMessage(header.front()));
      }
      if (header.size() == 2 && header[1] == "multiplier") {
        day.shape = true;
        continue;
      }
      std::map<std::string, int> index;
      for (size_t s = 0; s < day.services.size(); ++s) index[day.services[s]] = static_cast<int>(s);
      std::vector<bool> seen(day.services.size(), false);
      for (size_t c = 1; c < header.size(); ++c) {
        const auto it = index.find(header[c]);
        if (it == index.end()) {
          return FieldError(source, line.number, header[c],
                            "no service of " + QuoteForMessage(scenario.source) +
                                " has this name (a day shape has the one column 'multiplier')");
        }
        if (seen[it->second])
          return FieldError(source, line.number, header[c], "column given twice");
        seen[it->second] = true;
        column_service.push_back(it->second);
      }
      for (size_t s = 0; s < seen.size(); ++s) {
        if (!seen[s]) {
          return FieldError(
              source, line.number, day.services[s],
              "no column for this service of the scenario (or give one 'multiplier' column)");
        }
      }
      continue;
    }
    if (fields.size() != header.size()) {
      return FieldError(source, line.number, "minute",
                        "expected " + std::to_string(header.size()) +
                            " fields as the header on line " + std::to_string(header_line) +
                            " has, got " + std::to_string(fields.size()));
    }
    const std::optional<double> minute = ToDouble(fields[0]);
    if (!minute || *minute != day.minutes()) {
      return FieldError(source, line.number, "minute",
                        "minutes must count 0, 1, 2, ... with no gap: expected " +
                            std::to_string(day.minutes()) + ", got " + QuoteForMessage(fields[0]));
    }
    if (day.minutes() == kMaxDayMinutes) {
      return FieldError(source, line.number, "minute",
                        "at most " + std::to_string(kMaxDayMinutes) + " minutes (a week)");
    }
    std::vector<double> row(day.services.size());
    for (size_t c = 1; c < fields.size(); ++c) {
      const InputRange& range = day.shape ? kDayMultiplier : limits::kRateRps;
      const std::optional<double> value = ToDouble(fields[c]);
      if (!value || !range.Contains(*value)) {
        return FieldError(source, line.number, header[c],
                          OutOfRange(range, QuoteForMessage(fields[c])));
      }
      if (day.shape) {
        for (size_t s = 0; s < row.size(); ++s) {
          const double rate = scenario.services[s].rate_rps * *value;
          if (!limits::kRateRps.Contains(rate)) {
            return FieldError(source, line.number, header[c],
                              "service '" + day.services[s] + "' at this multiplier: rate " +
                                  OutOfRange(limits::kRateRps, rate));
          }
          row[s] = rate;
        }
      } else {
        row[column_service[c - 1]] = *value;
      }
    }
    day.rps.push_back(std::move(row));
  }
  if (header.empty())
    return file_error("no header: expected 'minute,multiplier' or 'minute,<service>,...'");
  if (day.minutes() < 2)
    return file_error("at least 2 minutes of rates, got " + std::to_string(day.minutes()));
  return day;
}

Result<DayRates> LoadDayRates(const std::string& path, const Scenario& scenario) {
  TESSERA_ASSIGN_OR_RETURN(const std::string text, ReadTextFile(path));
  return ParseDayRates(text, path, scenario);
}

Scenario WithRates(Scenario scenario, const std::vector<double>& rates) {
  for (size_t s = 0; s < scenario.services.size() && s < rates.size(); ++s) {
    scenario.services[s].rate_rps = rates[s];
  }
  return scenario;
}

}  // namespace tessera
