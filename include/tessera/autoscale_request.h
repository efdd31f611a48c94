// A day of traffic, autoscaled (`tessera autoscale`, docs/autoscale.md): the
// scenario's services follow per-minute rates (day_rates.h); an autoscaling
// policy re-plans ahead of the load and moves the cluster between plans
// through transitions of real duration (transition_duration.h); the day is
// simulated minute by minute (simulator.h) and set beside (a) the static plan
// for the day's peak and (b) an oracle that plans each interval for its true
// peak and moves at once.
//
// The policy (autoscaler.h) is fed each minute's rates as the minute ends
// and weighs a move while no transition runs.
// The day starts on the plan for the first lead window's need (the cluster
// ran before the day began).
//
// Simulation: each minute on the instances serving in it, at that minute's
// rates with Poisson arrivals: a minute without a transition for `sample_s`
// seconds, a minute a transition runs through from its start to the
// transition's end (at least `sample_s`, at most 60 s) with every instance
// taking requests only while it serves (transition_simulation.h); a minute
// starts with empty queues. GPUs of a minute: those holding an
// instance (during a transition, its peak). GPU-hours: their sum / 60.
//
// Errors: InvalidArgument naming the flag or file, line and field; a rate
// no plan can serve is an error naming the service and minute.
//
// Thread-safety: RunAutoscale may run on any thread; it starts `jobs`
// threads of its own for the simulation.
#ifndef TESSERA_AUTOSCALE_REQUEST_H_
#define TESSERA_AUTOSCALE_REQUEST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/autoscaler.h"
#include "tessera/durations.h"
#include "tessera/problem_inputs.h"
#include "tessera/scenario.h"
#include "tessera/status.h"
#include "tessera/transition/transition_duration.h"
#include "tessera/util/input_limits.h"
#include "tessera/workload/day_rates.h"

namespace tessera {

// The range of each simulation option (the CLI's flags, the Python
// keywords), which RunAutoscale checks with the policy's (autoscaler.h).
inline constexpr DurationRange kAutoscaleSample{0.1, kMinute};
inline constexpr DurationRange kAutoscaleOracleInterval{kMinute, kDay};
inline constexpr InputRange kAutoscaleJobs{0, 64, false, true};

// The policy's options, and the simulation's.
struct AutoscaleOptions : AutoscalePolicyOptions {
  double sample_s = 3;  // simulated seconds of a minute without a transition
  double oracle_interval_s = 15 * 60;
  int jobs = 0;  // simulation threads; 0: the machine's cores
  std::uint64_t seed = 1;
};

struct AutoscaleRequest {
  ProblemInputs inputs;              // the scenario (rates at the shape's 1) and profiles
  std::optional<Scenario> scenario;  // in memory, in place of inputs.scenario
  std::string rates_path;
  std::optional<DayRates> rates;  // in memory, in place of rates_path
  // The previous day, for the seasonal forecaster (same format); empty: the
  // day itself (a day that repeats).
  std::string season_path;
  std::optional<DayRates> season;
  std::string planner;  // empty: the default MIG planner
  AutoscaleOptions options;
  NoteSink notes;
  std::function<void(std::string_view)> progress;
};

// One way of running the day.
struct AutoscaleStrategy {
  std::string name;  // "autoscale", "static-peak", "oracle"
  double gpu_hours = 0;
  int peak_gpus = 0;                 // the most GPUs holding an instance at any moment
  int min_gpus = 0;                  // the fewest
  int max_spare_gpus = 0;            // most GPUs beyond both plans' during a move
  std::vector<double> gpus;          // per minute: mean GPUs holding an instance
  std::vector<AutoscaleMove> moves;  // autoscale and oracle
  // Moves the autoscaler weighed and did not start, by why (minutes).
  std::map<std::string, int> declined;
  // Per service (scenario order), per minute.
  std::vector<std::vector<double>> compliance;  // share within the SLO
  std::vector<std::vector<double>> capacity;    // SLO-safe capacity, rps
  std::vector<double> lowest;                   // per service: lowest minute
  std::vector<int> lowest_minute;               // ... and which
  int minutes_below_target = 0;                 // service-minutes < kComplianceTarget
};

struct AutoscaleReport {
  std::string scenario;
  std::string rates;   // the rates file
  std::string season;  // the previous day's (the rates file when none was given)
  std::string planner;
  AutoscaleOptions options;
  std::vector<std::string> services;
  int minutes = 0;
  std::vector<std::vector<double>> rps;  // per service, per minute
  AutoscaleStrategy autoscale, static_peak, oracle;
};

Result<AutoscaleReport> RunAutoscale(const AutoscaleRequest& request);

// The simulator's seed for job `job` of a day run with `seed`, where a job
// is one minute of one strategy and a day has `jobs` of them: (seed - 1) x
// (jobs + 1) + 1 + job. Seed 1's jobs take 1 to `jobs`, and no two seeds'
// jobs share a seed (the simulator mixes each into independent streams),
// so two seeds' days draw independent arrivals; seed + job would have
// replayed seed N's arrivals under seed N + 1 a minute later.
std::uint64_t AutoscaleMinuteSeed(std::uint64_t seed, int job, int jobs);

// Reads "mig-create=2s,model-load=20s" (keys mig-create, mig-destroy,
// mps-start, model-load, drain; each a duration from 0 to an hour) over the
// defaults; InvalidArgument naming `flag`, the key, and the keys or range.
Result<StepDurations> ParseStepDurations(std::string_view flag, std::string_view text);
// "mig-create=2s,mig-destroy=1s,mps-start=1s,model-load=15s,drain=1s".
std::string FormatStepDurations(const StepDurations& durations);

// For people: the day's figures, strategy by strategy, then each service's
// lowest minute, then the moves. For programs: JSON with every per-minute
// series (docs/autoscale.md).
std::string FormatAutoscaleText(const AutoscaleReport& report);
std::string FormatAutoscaleJson(const AutoscaleReport& report);
// The day as an SVG timeline: GPUs over the day (the three strategies), and
// each service's rate against the autoscaled capacity (their sums past 12
// services), the moves shaded.
std::string FormatAutoscaleSvg(const AutoscaleReport& report);

}  // namespace tessera

#endif  // TESSERA_AUTOSCALE_REQUEST_H_
