#include "tessera/durations.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "tessera/util/text_io.h"

namespace tessera {
namespace {

struct Unit {
  std::string_view suffix;
  double seconds;
};

// Longer suffixes first: "ms" and "days" end with "s", "min" starts as "m".
constexpr Unit kUnits[] = {{"days", kDay}, {"day", kDay},  {"ms", kMillisecond}, {"min", kMinute},
                           {"s", 1},       {"m", kMinute}, {"h", kHour},         {"d", kDay}};

// Examples in the flag's own form.
std::string Examples(const DurationRange& range, double plain_unit_s) {
  if (plain_unit_s != 1) return "such as 500, 500ms or 2s";
  if (range.min_s >= kMinute) return "such as 24h, 90m or 7d";
  if (range.min_s >= 1) return "such as 60, 60s, 2m or 1h";
  return "such as 60, 60s, 500ms or 2m";
}

std::string RangeError(const DurationRange& range, double plain_unit_s, std::string_view text) {
  const bool or_zero = range.zero && range.min_s > 0;
  return fmt::format("expected {} {} {}, got {}", or_zero ? "0 or a duration" : "a duration",
                     DescribeRange(range), Examples(range, plain_unit_s), QuoteForMessage(text));
}

// The seconds `text` says, in range, or the error (without the flag).
Result<double> Parse(std::string_view text, const DurationRange& range, double plain_unit_s) {
  std::string_view number = Trim(text);
  double scale = plain_unit_s;
  for (const Unit& unit : kUnits) {
    if (number.ends_with(unit.suffix)) {
      number = Trim(number.substr(0, number.size() - unit.suffix.size()));
      scale = unit.seconds;
      break;
    }
  }
  const std::optional<double> value = ToDouble(number);
  const double seconds = value ? *value * scale : NAN;
  const bool in_range =
      std::isfinite(seconds) &&
      ((range.zero && seconds == 0) || (seconds >= range.min_s && seconds <= range.max_s));
  if (!in_range) return Status::InvalidArgument(RangeError(range, plain_unit_s, text));
  return seconds == 0 ? 0.0 : seconds;  // no "-0"
}

}  // namespace

std::string FormatDuration(double seconds) {
  struct Named {
    double seconds;
    const char* one;
    const char* many;
  };
  constexpr Named kNamed[] = {{kDay, "day", "days"}, {kHour, "h", "h"}, {kMinute, "min", "min"}};
  for (const Named& n : kNamed) {
    const double count = seconds / n.seconds;
    if (seconds >= n.seconds && count == std::round(count)) {
      return fmt::format("{:g} {}", count, count == 1 ? n.one : n.many);
    }
  }
  if (seconds >= 1 || seconds == 0) return fmt::format("{:g} s", seconds);
  return fmt::format("{:g} ms", seconds / kMillisecond);
}

std::string DescribeRange(const DurationRange& range) {
  const std::string from = range.min_s == 0 ? "0" : FormatDuration(range.min_s);
  return fmt::format("from {} to {}", from, FormatDuration(range.max_s));
}

Result<double> ParseDuration(std::string_view flag, std::string_view text,
                             const DurationRange& range, double plain_unit_s) {
  Result<double> seconds = Parse(text, range, plain_unit_s);
  if (seconds.ok() || flag.empty()) return seconds;
  return seconds.status().WithContext(flag);
}

Result<double> CheckDuration(std::string_view flag, double value, const DurationRange& range,
                             double plain_unit_s) {
  return ParseDuration(flag, fmt::format("{}", value), range, plain_unit_s);
}

double TotalRate(const Scenario& scenario) {
  double rate = 0;
  for (const Service& s : scenario.services) rate += s.rate_rps;
  return rate;
}

Status CheckSimulatedRequests(std::string_view flag, double duration_s, double rate) {
  const double requests = rate * duration_s;
  if (requests <= kMaxSimulatedRequests) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{}: {} at the scenario's {:.6g} requests/s is {} requests; at most {} are simulated, so "
      "give at most {}",
      flag, FormatDuration(duration_s), rate, GroupThousands(std::llround(requests)),
      GroupThousands(std::llround(kMaxSimulatedRequests)),
      FormatDuration(std::floor(kMaxSimulatedRequests / rate))));
}

}  // namespace tessera
