// Day rates: each service's request rate minute by minute, as `tessera
// autoscale --rates FILE` reads them (docs/autoscale.md).
//
// The file is CSV with a header; lines starting with '#' are comments (the
// shipped day shapes carry their attribution there). The first column is
// `minute`, 0, 1, 2, ... in order with no gap; then either
//   * one column `multiplier`: a day shape, applied to every service's
//     scenario rate (the scenario gives the rates at the shape's 1), or
//   * one column per service of the scenario, named as the service, in
//     requests per second (any order; every service once, no other column).
// At least 2 and at most kMaxDayMinutes rows; every value a finite number
// > 0 (a rate within limits::kRateRps, a multiplier within
// kDayMultiplier).
//
// Errors: InvalidArgument "<file>:<line>: field '<name>': <what>" for a bad
// value or a missing or unknown column (line 0 names the file as a whole);
// NotFound / IoError from reading it.
//
// Thread-safety: values and pure functions.
#ifndef TESSERA_WORKLOAD_DAY_RATES_H_
#define TESSERA_WORKLOAD_DAY_RATES_H_

#include <string>
#include <string_view>
#include <vector>

#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/util/input_limits.h"

namespace tessera {

// A week of minutes: enough for any day file, small enough to simulate.
inline constexpr int kMaxDayMinutes = 7 * 24 * 60;
// A day shape's multiplier: the scenario's rate times at most 1,000.
inline constexpr InputRange kDayMultiplier{0, 1000, true};

struct DayRates {
  std::string source;                 // the file, for messages
  bool shape = false;                 // read from a `multiplier` column
  std::vector<std::string> services;  // scenario order
  // rps[m][s]: service s's rate during minute m (scenario order).
  std::vector<std::vector<double>> rps;

  int minutes() const { return static_cast<int>(rps.size()); }
  // The highest rate of service s over minutes [from, to) (clipped to the day).
  double PeakOf(int s, int from, int to) const;
  // The rates by service: [s][m] = rps[m][s].
  std::vector<std::vector<double>> ByService() const;
};

// Reads `text` (from `source`) against `scenario`.
Result<DayRates> ParseDayRates(std::string_view text, const std::string& source,
                               const Scenario& scenario);
// Reads the file at `path`.
Result<DayRates> LoadDayRates(const std::string& path, const Scenario& scenario);

// `scenario` with every service's rate set to rates[s].
Scenario WithRates(Scenario scenario, const std::vector<double>& rates);

}  // namespace tessera

#endif  // TESSERA_WORKLOAD_DAY_RATES_H_
