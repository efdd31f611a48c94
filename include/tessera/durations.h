// Every time input of Tessera (the CLI's time flags, the Python package's
// durations, the library requests' ranges) is read here, once, at the edge: one
// parser for "60", "60s", "500ms", "2m", "1h", "1d", and one range per flag
// with a floor and a ceiling, so that no flag can make a run loop forever
// (a period of 1e-300 s), overflow (a limit of 1e300 s) or quietly fall back
// to a default (NaN). Errors name the flag, the accepted range and the text.
#ifndef TESSERA_DURATIONS_H_
#define TESSERA_DURATIONS_H_

#include <string>
#include <string_view>

#include "tessera/scenario.h"
#include "tessera/status.h"

namespace tessera {

inline constexpr double kMillisecond = 1e-3;
inline constexpr double kMinute = 60;
inline constexpr double kHour = 3600;
inline constexpr double kDay = 86400;
inline constexpr double kYear = 365 * kDay;

// The durations a flag accepts, in seconds: [min_s, max_s], and 0 as well
// when `zero` (then 0 means off, never or no delay).
struct DurationRange {
  double min_s = kMillisecond;
  double max_s = kDay;
  bool zero = false;
};

// ---- The range of every time flag (README, "Input limits") ----------------

// Simulated time: simulate --duration, plan --verify-duration, gslice
// --duration.
inline constexpr DurationRange kSimulatedTime{kMillisecond, kDay};
// A planner's wall-clock budget: plan and compare --time-limit.
inline constexpr DurationRange kTimeLimit{kMillisecond, kDay};
// simulate --step-seconds: how long each state of a transition is simulated
// (the run, phases + 2 steps, also within kSimulatedTime).
inline constexpr DurationRange kTransitionStep{kMillisecond, kDay};
// gslice --period (also at most --duration, and at most kMaxPeriods of them).
inline constexpr DurationRange kTuningPeriod{kMillisecond, kDay};
// gslice --reload-delay: 0 = a shadow process is ready at once.
inline constexpr DurationRange kReloadDelay{0, kDay, true};
// simulate --burst-on-s: the mean length of an "on" period.
inline constexpr DurationRange kBurstOn{kMillisecond, kDay};
// simulate --max-queue-delay-ms and --drop-after-ms (plain numbers are ms;
// 0 = start a partial batch at once / never drop).
inline constexpr DurationRange kServingDelay{0, kDay, true};
// replay --consolidate-every: off (0) or a trace-time interval; a floor of a
// minute keeps a trace of months to at most a few hundred thousand rounds.
inline constexpr DurationRange kConsolidation{kMinute, kYear, true};
// replay --mecc-window: the look-back window of arrivals.
inline constexpr DurationRange kMeccWindow{1, kYear};

// agent --ready-timeout: how long a serving process may take to answer ready
// (loading a large model takes minutes); --drain-timeout: how long a drained
// process may take to finish (0 = kill at once); --interval: the wait between
// two reconciles of a running agent.
inline constexpr DurationRange kReadyTimeout{kMillisecond, kHour};
inline constexpr DurationRange kDrainTimeout{0, kHour, true};
inline constexpr DurationRange kReconcileInterval{100 * kMillisecond, kDay};

// simulate --burst-on-share is a share, not a time: [kMinBurstOnShare, 1].
// Below it the rate while "on" (rate / share) spaces arrivals closer than a
// double resolves over a day.
inline constexpr double kMinBurstOnShare = 1e-3;
// gslice: at most this many tuning periods in one run (--duration / --period).
inline constexpr double kMaxPeriods = 1e6;
// replay: at most this many consolidation rounds over the trace's span
// (--consolidate-every).
inline constexpr double kMaxConsolidationRounds = 1e6;
// simulate, plan --verify and gslice: at most this many requests (the
// scenario's total rate x the duration). No request is kept (the latency
// percentiles are streamed, quantile_histogram.h), so memory does not grow
// with it; it bounds the run time: about half an hour of one core at the
// simulator's 5-10 million requests per second.
inline constexpr double kMaxSimulatedRequests = 1e10;

// `seconds` for people: "1 ms", "1.5 s", "1 min", "1 h", "1 day", "365 days".
std::string FormatDuration(double seconds);

// The range as the error messages say it: "from 1 ms to 1 day", "0 (off) or
// from 1 min to 365 days".
std::string DescribeRange(const DurationRange& range);

// `text` as seconds: a number with an optional unit (ms, s, m, h, d; a plain
// number is in `plain_unit_s` seconds: 1 for seconds, 1e-3 for flags named
// -ms). InvalidArgument "<flag>: expected a duration from ... to ... such as
// ..., got '<text>'" when it is not a finite number, or out of `range`
// (without "<flag>: " when `flag` is empty).
Result<double> ParseDuration(std::string_view flag, std::string_view text,
                             const DurationRange& range, double plain_unit_s = 1);
// A number already read (the Python package's keywords, a request's
// field) checked as ParseDuration checks its text: `value` in
// `plain_unit_s` seconds; the same error, naming `flag`.
Result<double> CheckDuration(std::string_view flag, double value, const DurationRange& range,
                             double plain_unit_s = 1);

// Ok iff `duration_s` at a total rate of `rate_rps` stays within
// kMaxSimulatedRequests; otherwise InvalidArgument naming `flag`, the count
// and the longest duration that fits.
Status CheckSimulatedRequests(std::string_view flag, double duration_s, double rate_rps);
// The sum of the scenario's rates.
double TotalRate(const Scenario& scenario);

}  // namespace tessera

#endif  // TESSERA_DURATIONS_H_
